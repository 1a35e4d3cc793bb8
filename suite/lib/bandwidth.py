"""The device's copy bandwidth, measured where and when a run measures: the ceiling that memory-bound
kernels are compared with (bytes read + written per second, as the H200 notes count it)."""
from __future__ import annotations

import time


def copy_gbps(device: str, nbytes: int = 1 << 30, reps: int = 20) -> float:
    """Median GB/s (1e9 bytes, read + written) of copying an nbytes buffer into another on `device`;
    on a GPU timed with CUDA events after warm-up, on the CPU with the host timer (a smaller buffer)."""
    import torch  # lazily: importing this module does not start torch

    if device != "cuda":
        nbytes = min(nbytes, 64 << 20)
    src = torch.randint(0, 255, (nbytes,), dtype=torch.uint8, device=device)
    dst = torch.empty_like(src)
    times = []
    for i in range(reps + 3):
        if device == "cuda":
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            dst.copy_(src)
            end.record()
            end.synchronize()
            dt = start.elapsed_time(end) / 1e3
        else:
            t0 = time.perf_counter()
            dst.copy_(src)
            dt = time.perf_counter() - t0
        if i >= 3:
            times.append(dt)
    times.sort()
    return 2 * nbytes / times[len(times) // 2] / 1e9
