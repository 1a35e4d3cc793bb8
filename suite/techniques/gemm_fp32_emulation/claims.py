"""Claims this technique reproduces (page: "BF16x9 and BF16x6 — FP32 accuracy on BF16 silicon")."""
from suite.claims.spec import Arithmetic, Band, Claim, Selector, about, up_to

SECTION = "BF16x9 and BF16x6 — FP32 accuracy on BF16 silicon"
PAGE = "the page (kernel & attention optimization), citing the BF16xN paper and NVIDIA"
CUBLAS_BLOG = ("NVIDIA technical blog, 'Boosting Matrix Multiplication Speed and Flexibility with NVIDIA "
               "cuBLAS 12.9' (2025): FP32 emulation on Blackwell BF16 tensor cores '3x to 4x faster'")
T = "gemm_fp32_emulation"
BF16X9 = ("triton_bf16x9", "triton_bf16x9_tma", "triton_bf16x9_ws", "triton_bf16x9_regsplit", "triton_bf16x9_chain")
BIG = "m8192n8192k8192"


CLAIMS = (
    Claim("bf16_28x_fp32_gb200",
          "Peak BF16 matrix throughput on GB200 is roughly 28x peak FP32 matrix throughput.",
          28, "x", PAGE, "arithmetic", "GB200", SECTION, about(28),
          Arithmetic("suite.claims.arithmetic:peak_ratio", {"gpu": "GB200", "num": "bf16", "den": "fp32",
                                                            "also": "GB200-1200W"}),
          technique=T, quantity="GB200 datasheet dense BF16 / FP32 rate",
          note="the NVL72 datasheet gives 31x; the page's ~28x matches a 1,200 W GB200 (FP32 90 TFLOP/s); "
               "2:4-sparse BF16 would double either"),
    Claim("bf16x9_net_3x_arithmetic",
          "9x the multiplies, but each is 28x cheaper -> up to ~3x net speedup.",
          3, "x", PAGE, "arithmetic", "GB200", SECTION, about(3),
          Arithmetic("suite.claims.arithmetic:emulation_net_speedup", {"cheaper": 28.0, "products": 9}),
          technique=T, quantity="28 / 9"),
    Claim("bf16x9_fp32_comparable",
          "BF16x9: all 9 cross products -> FP32-comparable accuracy.",
          1, "x fp32 error", PAGE, "authors", "any", SECTION,
          Band(None, 2.0, None, "'comparable' -> error at most 2x cuBLAS FP32 (IEEE) on the same inputs"),
          Selector(T, "rel_err", BF16X9, over="cublas_fp32", reduce="worst", cpu_ok=False),
          technique=T, quantity="best BF16x9 implementation's rel_err / cuBLAS FP32's, worst case"),
    Claim("bf16x9_up_to_3x",
          "BF16x9: up to ~3x net speedup over native FP32 (Blackwell; the vendor says 3x to 4x).",
          3, "x", f"{PAGE}; {CUBLAS_BLOG}", "vendor", "GB200 / B200", SECTION, up_to(3),
          Selector(T, "tflops", BF16X9, case=BIG, over="cublas_fp32"),
          technique=T, runs_on=("GB200", "B200"),
          analog=Selector(T, "tflops", BF16X9, case=BIG, over="cublas_fp32"), analog_unit="x on the {gpu}",
          projection="suite.claims.projections:fp32_emulation_blackwell",
          note="the projection agrees with suite/techniques/gemm_fp32_emulation/projection.py",
          quantity="best BF16x9 TFLOP/s / cuBLAS FP32 TFLOP/s at 8192^3"),
)
