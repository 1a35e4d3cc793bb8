"""The machine's ceilings, measured once per run on a GPU, and each throughput row's share of one.

A ceiling is what this GPU reaches now on the simplest kernel of its kind: cuBLAS GEMMs at 8192^3
(bf16, fp32 without TF32, int8, fp64), a device-to-device copy, and a MUFU exp2 loop. A technique
says which ceiling each of its rate metrics is a share of (Technique.ceilings); gbps and texp_per_s
default to the copy and the MUFU ceilings. Off a GPU no ceiling is measured and no share is stored.
"""
from __future__ import annotations

import statistics
from typing import Any

from suite.ceilings import CEILINGS, GEMM_N, ceiling_for



def _gemm_tflops(dtype_name: str, reps: int = 10) -> float:
    """Median TFLOP/s (TOP/s for int8) of one N^3 GEMM on GPU 0, CUDA events after warm-up."""
    import torch  # lazily: runners import without starting torch

    n = GEMM_N
    if dtype_name == "int8":
        a = torch.randint(-64, 64, (n, n), dtype=torch.int8, device="cuda")
        b = torch.randint(-64, 64, (n, n), dtype=torch.int8, device="cuda").t().contiguous().t()
        fn = lambda: torch._int_mm(a, b)
    else:
        dtype = {"bf16": torch.bfloat16, "fp32": torch.float32, "fp64": torch.float64}[dtype_name]
        a = torch.randn(n, n, device="cuda", dtype=dtype)
        b = torch.randn(n, n, device="cuda", dtype=dtype)
        fn = lambda: a @ b
    times = []
    for i in range(reps + 2):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        if i >= 2:
            times.append(start.elapsed_time(end) / 1e3)
    return 2 * n ** 3 / statistics.median(times) / 1e12


def measure(device: str) -> dict[str, dict] | None:
    """{key: {value, unit, method}} for every ceiling this GPU can run (a failing one is left out,
    its error kept under "errors"); None off a GPU."""
    if device != "cuda":
        return None
    import torch

    out: dict[str, Any] = {}
    errors = {}
    tf32 = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = False
    try:
        probes = {"bf16_tflops": lambda: _gemm_tflops("bf16"), "fp32_tflops": lambda: _gemm_tflops("fp32"),
                  "int8_tops": lambda: _gemm_tflops("int8"), "fp64_tflops": lambda: _gemm_tflops("fp64"),
                  "copy_gbps": _copy, "mufu_exp2_texp_per_s": _mufu}
        for key, probe in probes.items():
            try:
                value = probe()
            except Exception as exc:  # one missing kernel (no int8 GEMM, no Triton) must not stop the run
                errors[key] = f"{type(exc).__name__}: {str(exc)[:200]}"
                continue
            unit, method = CEILINGS[key]
            out[key] = {"value": round(value, 4), "unit": unit, "method": method}
    finally:
        torch.backends.cuda.matmul.allow_tf32 = tf32
        torch.cuda.empty_cache()
    if errors:
        out["errors"] = errors
    return out


def _copy() -> float:
    from suite.lib.bandwidth import copy_gbps  # lazily, inside the probe: a past tree (backfill) may lack it

    return copy_gbps("cuda")


def _mufu() -> float:
    from suite.lib.mufu import mufu_exp2_texp_per_s  # lazily: imports triton

    return mufu_exp2_texp_per_s("cuda")


def add_shares(tech, impl, rows: list[dict], ceilings: dict | None) -> None:
    """Give each ok rate row stats["ceiling"] = {key, value, unit, divisor, share[, dense_equivalent]},
    in place."""
    if not ceilings:
        return
    for r in rows:
        if r["status"] != "ok" or r["value"] is None or r["stats"].get("probe"):
            continue
        which = ceiling_for(tech, impl, r["metric"])
        if which is None or which[0] not in ceilings:
            continue
        key, divisor = which
        c = ceilings[key]
        limit = c["value"] / divisor
        share = {"key": key, "value": limit, "unit": c["unit"], "divisor": divisor, "share": r["value"] / limit}
        if getattr(tech, "dense_equivalent", False):
            share["dense_equivalent"] = True
        r["stats"] = {**r["stats"], "ceiling": share}
