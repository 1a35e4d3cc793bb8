"""The device's MUFU exp2 rate, measured where and when a run measures: the ceiling that exp2-bound
kernels are compared with (ex2.approx.ftz.f32 evaluations per second, in units of 1e12)."""
from __future__ import annotations

import statistics

import triton
import triton.language as tl


@triton.jit
def _ex2_sum_kernel(x_ptr, out_ptr, n, TERMS: tl.constexpr, STEP: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    acc = tl.zeros_like(x)
    # One MUFU.EX2 per term; the two FADDs per term go to the FMA pipe, 8x wider than MUFU's.
    for _ in range(TERMS):
        acc += tl.inline_asm_elementwise("ex2.approx.ftz.f32 $0, $1;", "=r,r", [x], dtype=tl.float32,
                                         is_pure=True, pack=1)
        x -= STEP
    tl.store(out_ptr + offs, acc, mask=mask)


def mufu_exp2_texp_per_s(device: str, n: int = 1 << 23, terms: int = 256, reps: int = 15) -> float | None:
    """Median T exp2/s of a kernel doing `terms` MUFU exp2 per element of n fp32 values (CUDA
    events after warm-up); None off a GPU (inline PTX runs only on one)."""
    import torch  # lazily: importing this module does not start torch

    if device != "cuda":
        return None
    x = -8.0 * torch.rand(n, device="cuda")
    out = torch.empty_like(x)
    block = 1024
    grid = (triton.cdiv(n, block),)
    times = []
    for i in range(reps + 3):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        _ex2_sum_kernel[grid](x, out, n, TERMS=terms, STEP=1.0 / 64, BLOCK=block, num_warps=4)
        end.record()
        end.synchronize()
        if i >= 3:
            times.append(start.elapsed_time(end) / 1e3)
    return n * terms / statistics.median(times) / 1e12
