"""Claims about whole-layer fused kernels (megakernels): nobody here builds one."""
from suite.claims.spec import Claim, stated

SECTION = "Whole-layer fused kernels — megakernels"
PAGE = "the page (kernel & attention optimization)"

CLAIMS = (
    Claim("megakernel_1p2_6p7x",
          "Megakernels: reported results range from 1.2-6.7x end-to-end latency depending on the shape.",
          (1.2, 6.7), "x", f"{PAGE} (no single source given)", "authors", "various", SECTION, None, None,
          note="a range over several published systems; no megakernel is built here"),
    Claim("megakernel_a100_14p5_to_12p5_ms",
          "One published system takes per-token decode on a single A100 from 14.5 ms to 12.5 ms.",
          12.5, "ms/token", "the page's 'one published system' (Mirage Persistent Kernel, CMU, 2025: "
          "identification recalled)", "authors", "A100", SECTION, stated(12.5), None, runs_on=("A100",),
          recalled=True, projection="suite.claims.projections:decode_ms_h200",
          note="14.5 / 12.5 = 1.16x, at the bottom of the 1.2-6.7x range"),
    Claim("megakernel_78pct_h100_bandwidth",
          "HazyResearch's Llama megakernel reaches 78% of H100 memory bandwidth at batch 1.",
          78, "% of HBM bandwidth", "HazyResearch, Llama-1B megakernel blog post (2025)", "authors", "H100",
          SECTION, stated(78), None, runs_on=("H100",),
          projection="suite.claims.projections:bandwidth_fraction_h200",
          note="bandwidth-bound: the H200's HBM differs from the H100's, so H200 runs do not count for it"),
)
