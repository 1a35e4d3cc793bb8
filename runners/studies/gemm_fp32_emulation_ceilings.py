"""Ceilings measured beside a run (GPU): dense GEMM rates of the units the emulations build on, at
8192^3, median under runners/timing.py's protocol (runners/studies/timed.py). Prints one JSON object:
`python3 -m runners.studies.gemm_fp32_emulation_ceilings`."""
from __future__ import annotations

import json
import os

from runners.studies.timed import timed


def main(n: int = 8192) -> dict:
    """{name: TFLOP/s (TOP/s for int8)} for bf16->fp32 (cuBLAS), fp32 ieee/tf32, fp64, int8."""
    import torch

    from suite.lib.planes import fp32_precision

    def tflops(fn) -> float:
        stats = timed(fn, "cuda")[1]
        out["protocol"] = stats["protocol"]
        return round(work / (stats["median"] * 1e-3) / 1e12, 1)

    g = torch.Generator(device="cuda").manual_seed(0)
    a, b = (torch.randn(n, n, device="cuda", generator=g) for _ in range(2))
    ab, bb = a.bfloat16(), b.bfloat16()
    ai, bi = (torch.randint(-127, 128, (n, n), device="cuda", generator=g, dtype=torch.int8) for _ in range(2))
    ad, bd = a.double(), b.double()
    work = 2.0 * n ** 3
    runs = {"bf16_cublas_fp32out": lambda: torch.mm(ab, bb, out_dtype=torch.float32),
            "bf16_cublas": lambda: ab @ bb,
            "int8_int_mm": lambda: torch._int_mm(ai, bi.t().contiguous().t()),
            "fp64_cublas": lambda: ad @ bd}
    out = {}
    for name, fn in runs.items():
        out[name] = tflops(fn)
    for mode in ("ieee", "tf32"):
        with fp32_precision(mode):
            out[f"fp32_cublas_{mode}"] = tflops(lambda: a @ b)
    out.update(n=n, gpu=torch.cuda.get_device_name(), commit=os.environ.get("KWATCH_GIT_COMMIT"))
    return out


if __name__ == "__main__":
    print(json.dumps(main()))
