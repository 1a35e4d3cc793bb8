"""Claims about dense attention kernels (page: "Approximate exponential, and FlashAttention-4")."""
from suite.claims.spec import Arithmetic, Claim, Selector, about, rounded, stated, up_to

SECTION = "Approximate exponential, and FlashAttention-4"
FA4 = ("FlashAttention-4 — Dao et al., Algorithm and Kernel Pipelining Co-Design for Asymmetric "
       "Hardware Scaling (2026)")
FA3 = ("FlashAttention-3 — Shah et al., Fast and Accurate Attention with Asynchrony and Low-precision "
       "(2024), abstract")
FLEX = ("PyTorch blog, 'FlexAttention: The Flexibility of PyTorch with the Performance of "
        "FlashAttention' (2024)")
T = "attention_dense"
DENSE = ("sdpa_cudnn", "sdpa_flash", "sdpa_efficient", "flex_causal")
S16K = "s16384_h32kv8_d128"
# Our best dense attention as a percentage of the H200's dense BF16 peak (989.5 TFLOP/s).
BEST_SHARE = Selector(T, "tflops", DENSE, case=S16K, scale=100 / 989.5)
FLEX_SHARE = Selector(T, "tflops", "flex_causal", over="sdpa_flash", reduce="median", scale=100)
# FA2 (SDPA flash) at the longest causal GQA sequence the run timed (16K in the dense runs, 64K in the nightly)
FA2_SHARE = Selector(T, "tflops", "sdpa_flash", scale=100 / 989.5)
H100_SAME_DIE = ("Judged on H100 runs only; the H200 (the H100's GH100 die, same 132 SMs and 989.5 TFLOP/s dense "
                 "BF16, only HBM differs) is shown as other hardware, not as a reproduction.")

CLAIMS = (
    Claim("fa4_1605_tflops_b200",
          "FlashAttention-4 reaches up to 1605 TFLOP/s BF16 on B200.",
          1605, "TFLOP/s", FA4, "authors", "B200", SECTION, up_to(1605), None, technique=T,
          runs_on=("B200",), analog=BEST_SHARE, analog_unit="% of {gpu} BF16 peak (best dense attention, "
          "causal 16K)", projection="suite.claims.projections:attention_b200",
          note="needs a B200 and FA4 (Blackwell-only)"),
    Claim("fa4_71pct_utilisation_b200",
          "1605 TFLOP/s is about 71% utilisation of the B200.",
          71, "% of peak", FA4, "arithmetic", "B200", SECTION, rounded(71, 0.5),
          Arithmetic("suite.claims.arithmetic:utilisation", {"tflops": 1605, "gpu": "B200"}), technique=T,
          quantity="1605 / B200 datasheet dense BF16 peak"),
    Claim("fa4_1p3x_cudnn",
          "FlashAttention-4 is 1.3x faster than cuDNN 9.13 on B200.",
          1.3, "x", FA4, "authors", "B200", SECTION, stated(1.3), None, technique=T, runs_on=("B200",),
          projection="suite.claims.projections:ratio_cancels", note="needs a B200 with FA4 and cuDNN 9.13"),
    Claim("fa4_2p7x_triton",
          "FlashAttention-4 is 2.7x faster than Triton on B200.",
          2.7, "x", FA4, "authors", "B200", SECTION, stated(2.7), None, technique=T, runs_on=("B200",),
          projection="suite.claims.projections:ratio_cancels", note="needs a B200 with FA4"),
    Claim("fa2_35pct_h100",
          "FlashAttention-2 achieves only 35% utilization on the H100 GPU.",
          35, "% of peak", FA3, "authors", "H100", SECTION, stated(35),
          FA2_SHARE, technique=T, runs_on=("H100",), analog=FA2_SHARE,
          analog_unit="% of dense BF16 peak on the {gpu} (SDPA flash = FA2, causal GQA 16K or 64K, forward)",
          note=H100_SAME_DIE + " SDPA's flash backend is FlashAttention-2; ours is causal GQA at 16K or 64K (the "
          "best case of the run), forward only.",
          url="https://arxiv.org/abs/2407.08608",
          quantity="SDPA flash (FA2) TFLOP/s / 989.5 (the {gpu}'s dense BF16 peak), causal GQA, best case of the "
                   "run (16K or 64K)"),
    Claim("flex_90pct_fa2_forward",
          "FlexAttention reaches about 90% of FlashAttention-2's performance in the forward pass.",
          90, "% of FA2", FLEX, "authors", "A100", SECTION, about(90),
          FLEX_SHARE, technique=T, runs_on=("A100",), recalled=True, analog=FLEX_SHARE,
          analog_unit="% of FA2 on the {gpu}, causal GQA (median over the run's cases)",
          projection="suite.claims.projections:ratio_cancels",
          quantity="FlexAttention TFLOP/s / SDPA flash (FA2) TFLOP/s, causal, forward",
          note="the blog's share of FlashAttention-3 is not carried: we could not confirm its figure"),
)
