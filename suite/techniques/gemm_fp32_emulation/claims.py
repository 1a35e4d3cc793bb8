"""Claims this technique reproduces (page: "BF16x9 and BF16x6 — FP32 accuracy on BF16 silicon")."""
from suite.claims.spec import Arithmetic, Band, Claim, Custom, Selector, about, at_most, up_to

SECTION = "BF16x9 and BF16x6 — FP32 accuracy on BF16 silicon"
PAGE = "the page (kernel & attention optimization), citing the BF16xN paper and NVIDIA"
CUBLAS_BLOG = ("NVIDIA technical blog, 'Boosting Matrix Multiplication Speed and Flexibility with NVIDIA "
               "cuBLAS 12.9' (2025): FP32 emulation on Blackwell BF16 tensor cores '3x to 4x faster'")
T = "gemm_fp32_emulation"
BF16X9 = ("triton_bf16x9", "triton_bf16x9_regsplit", "triton_bf16x9_chain")
BIG = "m8192n8192k8192"


def valid_range(rows: list[dict], impl: str) -> tuple[int, int] | None:
    """The run of exp_a values around 0 (exp_b = 0) where `impl` stays within fp32 accuracy, from
    the exponent sweep's within_fp32 rows; None without such rows."""
    ok = {r["params"]["exp_a"]: r["value"] == 1.0 for r in rows
          if r["impl"] == impl and r["metric"] == "within_fp32" and r["params"].get("exp_b") == 0
          and "exp_a" in r["params"]}
    exps = sorted(ok)
    if 0 not in ok or not ok[0]:
        return None
    i = j = exps.index(0)
    while i > 0 and ok[exps[i - 1]]:
        i -= 1
    while j < len(exps) - 1 and ok[exps[j + 1]]:
        j += 1
    return exps[i], exps[j]


def bf16x6_region(rows: list[dict]):
    """How far (in exponents) BF16x6's measured fp32-accurate range falls short of [-110, 111] on
    either side, from the exponent sweep (exp_a with exp_b = 0); None without sweep rows."""
    for impl in ("triton_bf16x6", "triton_bf16x6_regsplit", "triton_dot_bf16x6", "torch_emul_bf16x6"):
        edges = valid_range(rows, impl)
        if edges:
            lo, hi = edges
            short = max(0, lo - (-110), 111 - hi)
            n = sum(1 for r in rows if r["impl"] == impl and r["metric"] == "within_fp32")
            return float(short), (f"{impl}: within fp32 accuracy (error <= 4x cuBLAS FP32's) for exp_a in "
                                  f"[{lo}, {hi}] with exp_b = 0 ({n} sweep points stored); short of "
                                  f"[-110, 111] by {short}")
    return None


CLAIMS = (
    Claim("bf16_28x_fp32_gb200",
          "Peak BF16 matrix throughput on GB200 is roughly 28x peak FP32 matrix throughput.",
          28, "x", PAGE, "arithmetic", "GB200", SECTION, about(28),
          Arithmetic("suite.claims.arithmetic:peak_ratio", {"gpu": "GB200", "num": "bf16", "den": "fp32"}),
          technique=T, quantity="GB200 datasheet dense BF16 / FP32 rate",
          note="2:4-sparse BF16 would give twice the ratio; the dense rate is the honest comparison"),
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
          analog=Selector(T, "tflops", BF16X9, case=BIG, over="cublas_fp32"),
          projection="suite.claims.projections:fp32_emulation_blackwell",
          quantity="best BF16x9 TFLOP/s / cuBLAS FP32 TFLOP/s at 8192^3"),
    Claim("bf16x6_exponent_range",
          "BF16x6: 6 of the 9 products, valid when the exponent range is known to be well behaved "
          "(roughly [-110, 111]).",
          (-110, 111), "exponent", PAGE, "authors", "any", SECTION,
          at_most(8, wording="'roughly' -> each edge within 8 exponents (about one sweep-grid step)"),
          Custom(T, "suite.techniques.gemm_fp32_emulation.claims:bf16x6_region", "within_fp32"),
          technique=T, quantity="exponents by which the measured valid range falls short of the claimed"),
)
