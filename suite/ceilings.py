"""The ceilings a run measures (keys, units, what is timed) and which one a throughput row is a share
of: the spec side, shared by the runner (runners/ceilings.py measures), the reports and the dashboard."""
from __future__ import annotations

GEMM_N = 8192
# key -> (unit, what was timed); the keys are what Technique.ceilings names.
CEILINGS = {
    "bf16_tflops": ("TFLOP/s", f"torch.matmul bf16 {GEMM_N}^3 (cuBLAS, fp32 accumulate)"),
    "fp32_tflops": ("TFLOP/s", f"torch.matmul fp32 {GEMM_N}^3 (cuBLAS, TF32 off)"),
    "int8_tops": ("TOP/s", f"torch._int_mm int8 {GEMM_N}^3 (cuBLASLt, int32 accumulate)"),
    "fp64_tflops": ("TFLOP/s", f"torch.matmul fp64 {GEMM_N}^3 (cuBLAS)"),
    "copy_gbps": ("GB/s", "1 GiB device-to-device copy, bytes read + written (suite.lib.bandwidth)"),
    "mufu_exp2_texp_per_s": ("Texp/s", "Triton loop of ex2.approx.ftz.f32, 2^31 evaluations (suite.lib.mufu)"),
}
DEFAULT_FOR_METRIC = {"gbps": "copy_gbps", "texp_per_s": "mufu_exp2_texp_per_s"}
SHORT = {"bf16_tflops": "bf16", "fp32_tflops": "fp32", "int8_tops": "int8", "fp64_tflops": "fp64",
         "copy_gbps": "copy", "mufu_exp2_texp_per_s": "mufu"}


def ceiling_for(tech, impl, metric: str) -> tuple[str, float] | None:
    """(ceiling key, divisor) that `metric` of `impl` is a share of, or None (no ceiling applies)."""
    spec = (getattr(tech, "ceilings", None) or {}).get(metric, DEFAULT_FOR_METRIC.get(metric))
    if callable(spec):
        spec = spec(impl)
    if spec is None:
        return None
    return (spec, 1.0) if isinstance(spec, str) else (spec[0], float(spec[1]))


def run_ceiling(stats: dict | None) -> dict | None:
    """The row's share of a run-level ceiling ({key, value, unit, divisor, share}), or None. Copy-share rows
    of files written before the run-level ceilings kept the name of their copy probe under this key."""
    c = (stats or {}).get("ceiling")
    return c if isinstance(c, dict) else None


def share_text(stats: dict | None) -> str:
    """'93% of bf16' (of bf16/9 where divided; '449% of bf16, dense-equiv.' for a rate that counts the
    dense problem's work; '103% of copy IMPOSSIBLE' for a rate beyond the machine), or '-' when the
    row has no ceiling."""
    c = run_ceiling(stats)
    if not c:
        return "-"
    div = c.get("divisor") or 1
    name = SHORT.get(c["key"], c["key"]) + (f"/{div:g}" if div != 1 else "")
    return (f"{c['share']:.0%} of {name}" + (", dense-equiv." if c.get("dense_equivalent") else "")
            + (" IMPOSSIBLE" if c.get("impossible") else ""))


def ceilings_line(ceilings: dict | None) -> str:
    """'ceilings: bf16 686 TFLOP/s, ...' or 'ceilings: -' (a CPU run, or one from before ceilings)."""
    if not ceilings:
        return "ceilings: - (none measured: a CPU run, or one from before runs measured them)"
    parts = [f"{SHORT.get(k, k)} {v['value']:.4g} {v['unit']}" for k, v in ceilings.items() if k != "errors"]
    missing = list((ceilings.get("errors") or {}))
    return "ceilings: " + ", ".join(parts) + (f"; not measured: {', '.join(missing)}" if missing else "")


def ceilings_from_rows(rows: list[dict]) -> dict[str, dict]:
    """A run's ceilings as its rows' shares recorded them (for a run read back from the database)."""
    out = {}
    for r in rows:
        c = run_ceiling(r.get("stats"))
        if c:
            out[c["key"]] = {"value": c["value"] * (c.get("divisor") or 1), "unit": c["unit"]}
    return {k: out[k] for k in sorted(out, key=lambda k: list(CEILINGS).index(k) if k in CEILINGS else len(CEILINGS))}


# Datasheet peaks (dense, no sparsity): GB/s of HBM (read + written), TFLOP/s or TOP/s.
DATASHEETS = {
    "H100 SXM": {"copy_gbps": 3350.0, "bf16_tflops": 989.0, "fp32_tflops": 67.0, "fp64_tflops": 67.0,
                 "int8_tops": 1979.0},
    "H100 PCIe": {"copy_gbps": 2000.0, "bf16_tflops": 756.0, "fp32_tflops": 51.0, "fp64_tflops": 51.0,
                  "int8_tops": 1513.0},
    "H200": {"copy_gbps": 4800.0, "bf16_tflops": 989.0, "fp32_tflops": 67.0, "fp64_tflops": 67.0,
             "int8_tops": 1979.0},
}


# Ceilings that bound the machine: no kernel's rate can exceed them. The MUFU exp2 ceiling bounds the
# special-function unit only (an exp that also runs polynomials on the FMA pipes exceeds it by design).
BOUNDS = ("copy_gbps", "bf16_tflops", "fp32_tflops", "fp64_tflops", "int8_tops")


def datasheet_for(gpu_name: str | None) -> dict | None:
    """{name, copy_gbps, bf16_tflops, ...} of a GPU named like torch.cuda.get_device_name(), or None."""
    n = (gpu_name or "").upper()
    if "H200" in n:
        key = "H200"
    elif "H100" in n:
        key = "H100 PCIe" if "PCIE" in n else "H100 SXM"  # "NVIDIA H100 80GB HBM3" is the SXM part
    else:
        return None
    return {"name": key, **DATASHEETS[key]}
