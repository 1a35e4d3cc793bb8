"""BF16x6's conditional correctness, from the exponent sweep (page: "BF16x9 and BF16x6")."""
from suite.claims.spec import Claim, Custom, at_most

SECTION = "BF16x9 and BF16x6 — FP32 accuracy on BF16 silicon"
PAGE = "the page (kernel & attention optimization), citing the BF16xN paper"
T = "gemm_fp32_emulation_sweep"
CLAIMED = (-110, 111)


def valid_range(rows: list[dict], impl: str) -> tuple[int, int] | None:
    """The run of exp_a values around 0 (exp_b = 0) where `impl` stays within fp32 accuracy, from
    the sweep's within_fp32 rows; None without such rows."""
    ok = {r["params"]["exp_a"]: r["value"] == 1.0 for r in rows
          if r["impl"] == impl and r["metric"] == "within_fp32" and r["params"].get("exp_b") == 0
          and "exp_a" in r["params"]}
    exps = sorted(ok)
    if not ok.get(0):
        return None
    i = j = exps.index(0)
    while i > 0 and ok[exps[i - 1]]:
        i -= 1
    while j < len(exps) - 1 and ok[exps[j + 1]]:
        j += 1
    return exps[i], exps[j]


def bf16x6_region(rows: list[dict]):
    """Exponents by which BF16x6's measured fp32-accurate range (exp_a, exp_b = 0) falls short of
    [-110, 111] on either side; None without sweep rows."""
    for impl in ("triton_bf16x6", "triton_bf16x6_regsplit", "triton_dot_bf16x6", "torch_emul_bf16x6"):
        edges = valid_range(rows, impl)
        if edges:
            lo, hi = edges
            short = max(0, lo - CLAIMED[0], CLAIMED[1] - hi)
            n = sum(1 for r in rows if r["impl"] == impl and r["metric"] == "within_fp32")
            return float(short), (f"{impl}: within fp32 accuracy (error <= 4x cuBLAS FP32's) for exp_a in "
                                  f"[{lo}, {hi}] with exp_b = 0 ({n} sweep points stored); short of "
                                  f"[{CLAIMED[0]}, {CLAIMED[1]}] by {short}")
    return None


CLAIMS = (
    Claim("bf16x6_exponent_range",
          "BF16x6: 6 of the 9 products, valid when the exponent range is known to be well behaved "
          "(roughly [-110, 111]).",
          CLAIMED, "exponent", PAGE, "authors", "any", SECTION,
          at_most(8, wording="'roughly' -> each edge within 8 exponents (about one sweep-grid step)"),
          Custom(T, "suite.techniques.gemm_fp32_emulation.claims_sweep:bf16x6_region", "within_fp32"),
          technique=T, quantity="exponents by which the measured valid range falls short of the claimed"),
)
