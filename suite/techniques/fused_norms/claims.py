"""Claims on normalization (page: "Normalization, and the cost of the small operations" and the
component list's "Normalization"), checked by our timing on each GPU."""
from suite.claims.spec import Claim, Custom, Selector, at_least, share_of_ceiling

T = "fused_norms"
SECTION = "Normalization, and the cost of the small operations"
PAGE = "the page"


def layer_over_rms(rows: list[dict], case_rms: str = "rms_t16384h4096", case_layer: str = "layer_t16384h4096",
                   impl: str = "torch_unfused"):
    """LayerNorm / RMSNorm latency of `impl` at one shape (GPU rows; default the multi-pass torch ops, the
    code the claim's 'pass' exists in), the other implementations beside it."""
    lat = {(r["impl"], r["case"]): r["value"] for r in rows
           if r["metric"] == "latency_ms" and r["device"] == "cuda"}
    ratio = {i: lat[(i, case_layer)] / lat[(i, case_rms)] for i in ("torch_unfused", "torch_functional", "triton_fused")
             if (i, case_layer) in lat and (i, case_rms) in lat}
    if impl not in ratio:
        return None
    moot = (f"; moot for one-pass kernels (triton_fused {ratio['triton_fused']:.3f}x): the row is in registers, "
            "the mean costs a reduction, not a pass" if "triton_fused" in ratio else "")
    return ratio[impl], "LayerNorm / RMSNorm latency at 16384 x 4096: " + ", ".join(
        f"{i} {v:.3f}x" for i, v in ratio.items()) + moot


CLAIMS = (
    Claim("fused_norm_85pct_copy_bandwidth",
          "RMSNorm is a memory-bound elementwise pass; fused, the win is entirely in trips to memory: "
          "a fused norm runs at the copy bandwidth.",
          0.85, "x copy bandwidth", PAGE + " (the 85% target: issue 17)", "ours", "any", SECTION,
          share_of_ceiling(0.85, wording="issue 17's target: >= 85% of the copy bandwidth measured in the same "
                           "job, at 16K tokens; above 100% the copy does not bound what was timed"),
          Selector(T, "ceiling_share", "triton_fused", params={"tokens": 16384}, reduce="worst"), technique=T,
          quantity="fused norm GB/s / GB/s of a 1 GiB device copy timed in the same job, worst of the 16K-token "
                   "cases (hidden 2048-8192, with and without the residual add)",
          note="at 1 token the call moves 8-64 KB and is launch-bound: its copy share is shown, not judged"),
    Claim("fused_norm_beats_unfused",
          "Unfused, each norm is a full read and write of the activation tensor for a handful of flops per "
          "element; fused LayerNorm/RMSNorm wins entirely in trips to memory.",
          2, "x unfused", PAGE, "ours", "any", SECTION,
          at_least(2.0, wording="the unfused Hugging Face formulation makes 8 elementwise passes "
                   "(>= 4x the fused bytes): 'a full read and write' per op -> fused >= 2x faster"),
          Selector(T, "latency_ms", "triton_fused", over="torch_unfused", speedup=True,
                   params={"tokens": 16384}, reduce="worst"),
          technique=T, quantity="unfused torch ops latency / fused Triton latency, worst 16K-token case"),
    Claim("rmsnorm_saves_a_pass",
          "RMSNorm as an alternative to LayerNorm drops the mean subtraction, which removes one full pass "
          "over the data.",
          1.2, "x (LayerNorm / RMSNorm time)", PAGE, "ours", "any", "Component optimizations — normalization",
          at_least(1.2, wording="'one full pass' -> in code that makes passes over the data, LayerNorm at "
                   "least 20% slower than RMSNorm written the same way"),
          Custom(T, f"suite.techniques.{T}.claims:layer_over_rms", "latency_ms"), technique=T,
          quantity="LayerNorm / RMSNorm latency of the unfused torch ops (one pass per op) at 16384 x 4096 "
                   "(bf16, {gpu})",
          note="judged where passes exist (multi-pass code); in a one-pass kernel the row is in registers and the "
               "mean costs a reduction, not a pass, so the claim is moot there (its ratio is shown beside)"),
)
