"""Claims this technique measures (page: "Block-scaled versus block floating point"). Numerics, so a
CPU run decides them (the formats round the same on any machine)."""
from suite.claims.spec import PAGE, Claim, Selector, at_least

T = "block_scaled_formats"
SECTION = "Block-scaled versus block floating point"

CLAIMS = (
    Claim("per_tensor_useless_4bit",
          "Per-tensor scale: one scale for millions of values. One outlier sets it, everything else "
          "collapses toward zero. Useless at 4 bits.",
          1, "share of values rounded to zero", PAGE, "ours", "any", SECTION,
          at_least(0.5, wording="'everything else collapses toward zero' -> at least half of the "
                   "nonzero values decode to zero"),
          # "best" of a lower-is-better metric: the outlier tensor that collapses least.
          Selector(T, "zero_frac", "torch_int4_tensor", params={"dist": "outlier"}, reduce="best",
                   cpu_ok=True),
          technique=T,
          quantity="share of nonzero values per-tensor INT4 (4 bits + one fp32 scale) decodes to zero, "
                   "on weight and activation tensors of 1M-4M values with 1 in 256 channels scaled x10 "
                   "(weights) or x50 (activations); the least over those tensors",
          note="on Gaussian tensors without outliers per-tensor INT4 keeps most values (docs/formats.md); "
               "the claim is about the outlier the page describes"),
    Claim("nvfp4_lower_error_than_mxfp4",
          "NVIDIA's argument for NVFP4 is lower quantization error from the finer, more expressive "
          "scaling (16-element blocks with an E4M3 scale, against MXFP4's 32 with a power-of-two E8M0).",
          1, "x (MXFP4 error / NVFP4 error)", PAGE, "vendor", "any", SECTION,
          at_least(1.0, wording="'lower error' -> MXFP4's error above NVFP4's on every tensor"),
          Selector(T, "rel_err", "torch_nvfp4", over="torch_mxfp4", speedup=True, reduce="worst",
                   cpu_ok=True),
          technique=T,
          quantity="MXFP4 relative error / NVFP4 relative error (Frobenius, vs the fp64 tensor), the "
                   "smallest over Gaussian, Student-t (df 3) and outlier-channel weights and activations; "
                   "NVFP4 stores 4.5 bits per element, MXFP4 4.25 (scales included)"),
)
