"""FlashAttention-4's conditional rescaling, beside our online-softmax attention kernels."""
from suite.claims.spec import Band, Claim, Selector

SECTION = "Approximate exponential, and FlashAttention-4"
FA4 = ("FlashAttention-4 — Dao et al., Algorithm and Kernel Pipelining Co-Design for Asymmetric "
       "Hardware Scaling (2026) (threshold as quoted in this project's numerics issue)")
T = "softmax_online"

CLAIMS = (
    Claim("fa4_conditional_rescale",
          "FlashAttention-4 rescales the running output only when the row max grows by more than 8 "
          "(log2 units); the final normalisation keeps the result exact.",
          8, "log2 threshold", FA4, "authors", "any", SECTION,
          Band(None, 1.5, None, "'exact' -> error at most 1.5x the always-rescaling kernel's (rounding "
               "order differs)"),
          Selector(T, "rel_err", "triton_mufu_cond8", over="triton_mufu", reduce="worst", cpu_ok=True), technique=T,
          recalled=True, quantity="rel_err of the conditional-rescale kernel / the always-rescaling one, "
          "worst case"),
)
