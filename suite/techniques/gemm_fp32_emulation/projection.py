"""Roofline projection of FP32 emulation (BF16xN) against native FP32 GEMM, from datasheet rates.

Labelled "projection": nothing here was measured on Blackwell."""
from __future__ import annotations

from suite.claims.datasheets import cite, rate

# The GPUs of the table (label -> datasheet key); every rate comes from suite/claims/datasheets.py.
GPUS = {"B200 (HGX)": "B200", "GB200 (NVL72)": "GB200", "GB200 (1200 W)": "GB200-1200W", "H200 (SXM)": "H200"}
# Per GPU in TFLOP/s: dense bf16 tensor core, fp32 (non-tensor) GEMM peak, and their source.
DATASHEETS = {label: {"bf16_dense": rate(gpu, "bf16").value, "fp32": rate(gpu, "fp32").value,
                      "source": f"{cite(gpu, 'bf16')}; {cite(gpu, 'fp32')}"} for label, gpu in GPUS.items()}
PRODUCTS = {"bf16x9": 9, "bf16x6": 6, "bf16x3": 3}
# Measured on the H200 (results/h200/gemm_fp32_emulation_nightly.json.gz, 8192^3): our kernels' bf16
# MMA rate (emulated TFLOP/s x products) over the datasheet's dense bf16 peak, and cuBLAS fp32 over
# the fp32 peak (51.29 / 67).
H200_TFLOPS = {"bf16x9": 72.84, "bf16x6": 93.61, "bf16x3": 180.40, "cublas_fp32": 51.29}
H200_EFFICIENCY = {s: H200_TFLOPS[s] * n / DATASHEETS["H200 (SXM)"]["bf16_dense"] for s, n in PRODUCTS.items()}
H200_FP32_EFFICIENCY = H200_TFLOPS["cublas_fp32"] / DATASHEETS["H200 (SXM)"]["fp32"]
VENDOR_CLAIM = {"scheme": "bf16x9", "speedup": 3.0, "statement": "up to ~3x net speedup (page)"}


def project(products: int, bf16_tflops: float, fp32_tflops: float, mma_efficiency: float = 1.0,
            fp32_efficiency: float = 1.0) -> dict:
    """Emulated FP32-GEMM rate and speedup over native fp32 when `products` bf16 GEMMs run at
    mma_efficiency x the bf16 peak and native fp32 at fp32_efficiency x its peak (roofline)."""
    emulated = bf16_tflops * mma_efficiency / products
    native = fp32_tflops * fp32_efficiency
    return {"emulated_tflops": emulated, "native_fp32_tflops": native, "speedup": emulated / native}


def table(mma_efficiency: dict[str, float] | None = None, fp32_efficiency: float = 1.0) -> list[dict]:
    # e.g. table(H200_EFFICIENCY, H200_FP32_EFFICIENCY): the Blackwell rates at Hopper's efficiencies
    """One row per (GPU, scheme): peak projection, and with per-scheme efficiencies if given
    (e.g. those measured on the H200: kernel bf16-MMA rate / bf16 peak)."""
    rows = []
    for gpu, d in DATASHEETS.items():
        for scheme, n in PRODUCTS.items():
            peak = project(n, d["bf16_dense"], d["fp32"])
            row = {"gpu": gpu, "scheme": scheme, "kind": "projection", "source": d["source"],
                   "peak_speedup": round(peak["speedup"], 2),
                   "peak_emulated_tflops": round(peak["emulated_tflops"], 1)}
            if mma_efficiency and scheme in mma_efficiency:
                eff = project(n, d["bf16_dense"], d["fp32"], mma_efficiency[scheme], fp32_efficiency)
                row["efficiency_speedup"] = round(eff["speedup"], 2)
            rows.append(row)
    return rows


def markdown(rows: list[dict]) -> str:
    """The table as Markdown (docs/numerics_gemm.md)."""
    eff = any("efficiency_speedup" in r for r in rows)
    head = "| GPU | scheme | peak projection (x fp32) | emulated TFLOP/s at peak |" + (
        " with H200-measured efficiencies (x fp32) |" if eff else "")
    lines = [head, "|" + "---|" * (5 if eff else 4)]
    for r in rows:
        line = f"| {r['gpu']} | {r['scheme']} | {r['peak_speedup']} | {r['peak_emulated_tflops']} |"
        if eff:
            line += f" {r.get('efficiency_speedup', '')} |"
        lines.append(line)
    return "\n".join(lines)
