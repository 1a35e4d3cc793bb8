"""Claims about whole-layer fused kernels (megakernels), with decode_step (our batch-1 decode of a
Llama-3.2-1B-shaped stack) as the nearest measurement: our fused step is five Triton launches per layer
replayed as one CUDA graph, or one persistent launch with grid barriers (triton_persistent)."""
from suite.claims.datasheets import rate
from suite.claims.spec import PAGE, Band, Claim, Selector, at_least, stated

SECTION = "Whole-layer fused kernels — megakernels"
T = "decode_step"
FUSED = ("triton_fused", "triton_fused_pdl", "triton_fused_mma", "triton_fused_tuned", "triton_fused_omerge",
         "triton_persistent")
SHARE_1K = Selector(T, "ceiling_share", FUSED, case="llama1b_kv1024", scale=100)
# the same step's GB/s as a percentage of the H100's datasheet HBM bandwidth (the blog post's denominator)
H100_SHEET_1K = Selector(T, "gbps", FUSED, case="llama1b_kv1024", scale=100 / (1000 * rate("H100", "hbm").value))

CLAIMS = (
    Claim("decode_launches_are_overhead",
          "At batch size 1 a decode step is hundreds of small kernel launches, and each launch is fixed "
          "overhead on work that is already bandwidth-bound.",
          2, "x (eager / CUDA-graph replay)", "the page", "ours", "any", SECTION,
          at_least(2.0, wording="'each launch is fixed overhead' -> replaying the very same kernels "
                   "without host launches at least halves the step; less would make launches a minor cost"),
          Selector(T, "latency_ms", "torch_graph", over="torch_eager", speedup=True, reduce="worst"),
          technique=T, quantity="bf16 eager step time / the same ops replayed as one CUDA graph, worst KV "
          "length (Llama-3.2-1B shape, batch 1)"),
    Claim("megakernel_1p2_6p7x",
          "Megakernels: reported results range from 1.2-6.7x end-to-end latency depending on the shape.",
          (1.2, 6.7), "x", f"{PAGE} (no single source given)", "authors", "various", SECTION, None, None,
          technique=T,
          note="a range over several published systems. Nearest here: decode_step's fused Triton steps (five "
               "launches per layer, or one persistent launch) over the CUDA-graph-replayed eager step "
               "(results/h200/serving/)"),
    Claim("megakernel_a100_14p5_to_12p5_ms",
          "One published system takes per-token decode on a single A100 from 14.5 ms to 12.5 ms.",
          12.5, "ms/token", "the page's 'one published system' (Mirage Persistent Kernel, CMU, 2025: "
          "identification recalled)", "authors", "A100", SECTION, stated(12.5), None, runs_on=("A100",),
          recalled=True, projection="suite.claims.projections:decode_ms_h200",
          note="14.5 / 12.5 = 1.16x, at the bottom of the 1.2-6.7x range"),
    Claim("megakernel_78pct_h100_bandwidth",
          "HazyResearch's Llama megakernel reaches 78% of H100 memory bandwidth at batch 1.",
          78, "% of HBM bandwidth", "HazyResearch, Llama-1B megakernel blog post (2025)", "authors", "H100",
          SECTION, Band(78 * 0.9, 78 * 1.1, "below", "plain figure -> +-10%; ours is not their kernel: our best fused "
                        "batch-1 step in the band reproduces that a Llama-1B-shaped decode reaches it on an H100, "
                        "below it is not reproduced (we did not reach it)"),
          H100_SHEET_1K, technique=T, runs_on=("H100",), analog=SHARE_1K,
          analog_unit="% of the copy bandwidth measured in the same job: the best of our fused Triton steps "
                      "(per-launch, with or without PDL, and persistent), Llama-3.2-1B shape, KV 1024, on the "
                      "{gpu} (our target: >= 80)",
          projection="suite.claims.projections:bandwidth_fraction_h200",
          quantity="GB/s of our best fused Triton step (Llama-3.2-1B shape, KV 1024, batch 1) / the H100's "
                   "datasheet 3.35 TB/s",
          note="bandwidth-bound: the H200's HBM differs from the H100's, so H200 runs do not count for it; "
               "their 78% is of the H100's datasheet bandwidth, as is ours on the H100; the analog on other GPUs is "
               "of the copy bandwidth we measure"),
)
