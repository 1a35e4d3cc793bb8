"""The machine's ceilings, measured once per run on a GPU, and each throughput row's share of one.

A ceiling is an upper bound of what this GPU can do on the simplest kernel of its kind: the best
of several shapes and repetitions of cuBLAS GEMMs (bf16, fp32 without TF32, int8, fp64), of a
device-to-device copy and of a MUFU exp2 loop, raised to the datasheet figure where this GPU's is
known (`source` says which). A technique says which ceiling each of its rate metrics is a share of
(Technique.ceilings); gbps and texp_per_s default to the copy and the MUFU ceilings. A rate above
its ceiling is flagged `impossible` (stats["impossible"]), unless the technique charges itself with
a dense problem's work (dense_equivalent) and the implementation is not its dense baseline. Off a
GPU no ceiling is measured and no share is stored.
"""
from __future__ import annotations

from typing import Any

from suite.ceilings import BOUNDS, CEILINGS, DATASHEETS, GEMM_N, ceiling_for, datasheet_for  # noqa: F401

# The datasheet table and BOUNDS live in suite.ceilings (db reads them too).


def datasheet() -> dict | None:
    """The datasheet of this process's GPU 0, or None (no GPU, or one not in DATASHEETS)."""
    import torch

    return datasheet_for(torch.cuda.get_device_name(0)) if torch.cuda.is_available() else None



def _gemm_tflops(dtype_name: str, reps: int = 10) -> float:
    """Best TFLOP/s (TOP/s for int8) of N^3 GEMMs on GPU 0 over N in (GEMM_N / 2, GEMM_N), each the
    fastest of reps after warm-up (CUDA events): an upper bound, not a typical rate."""
    return max(_gemm_once(dtype_name, n, reps) for n in (GEMM_N // 2, GEMM_N))


def _gemm_once(dtype_name: str, n: int, reps: int) -> float:
    import torch  # lazily: runners import without starting torch

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
    return 2 * n ** 3 / min(times) / 1e12


def measure(device: str) -> dict[str, dict] | None:
    """{key: {value, unit, method}} for every ceiling this GPU can run (a failing one is left out,
    its error kept under "errors"); None off a GPU."""
    if device != "cuda":
        return None
    import torch

    out: dict[str, Any] = {}
    errors = {}
    sheet = datasheet()
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
            out[key] = _upper(key, value, unit, method, sheet)
    finally:
        torch.backends.cuda.matmul.allow_tf32 = tf32
        torch.cuda.empty_cache()
    if errors:
        out["errors"] = errors
    return out


def _upper(key: str, measured: float, unit: str, method: str, sheet: dict | None) -> dict:
    """A ceiling entry: value = the upper bound (the datasheet figure where known and higher), with
    the measurement and the source kept."""
    peak = (sheet or {}).get(key)
    if peak and peak >= measured:
        return {"value": peak, "unit": unit, "method": method, "measured": round(measured, 4),
                "source": f"datasheet {sheet['name']}"}
    return {"value": round(measured, 4), "unit": unit, "method": method, "measured": round(measured, 4),
            "source": "measured (best of shapes and repetitions)"}


def _copy() -> float:
    from suite.lib.bandwidth import copy_gbps  # lazily, inside the probe: a past tree (backfill) may lack it

    return max(copy_gbps("cuda") for _ in range(3))  # the best of three medians


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
        share = {"key": key, "value": limit, "unit": c["unit"], "divisor": divisor, "share": r["value"] / limit,
                 "source": c.get("source", "measured")}
        stats = dict(r["stats"])
        if dense_equivalent(tech, impl):
            share["dense_equivalent"] = True
        elif share["share"] > 1.0 and key in BOUNDS:
            share["impossible"] = True
            stats["impossible"] = (f"{r['metric']} {r['value']:.4g} is {share['share']:.0%} of the {key} ceiling "
                                   f"{limit:.4g} {c['unit']} ({share['source']})")
        r["stats"] = {**stats, "ceiling": share}


def dense_equivalent(tech, impl) -> bool:
    """Whether impl's rates count a dense problem's work it does not do: the technique says so
    (tile-skipping, Monarch) and impl is not its baseline (the dense kernel, never dense-equivalent)."""
    return bool(getattr(tech, "dense_equivalent", False)) and not getattr(impl, "baseline", False)
