"""Claims about the hardware underneath (no technique here builds it): datasheet arithmetic and
vendor figures for Blackwell, FP4 and Rubin."""
from suite.claims.spec import PAGE, Arithmetic, Band, Claim, Selector, about, stated

A = "suite.claims.arithmetic"

CLAIMS = (
    Claim("tensor_core_2x_per_generation",
          "Tensor core throughput ~2x per generation (while MUFU.EX2 and shared memory stay roughly flat).",
          2, "x per generation", f"{PAGE}, after FlashAttention-4's asymmetry argument", "arithmetic",
          "Ampere -> Hopper -> Blackwell", "Diagram — why layer 2 suddenly matters", about(2),
          Arithmetic(f"{A}:generation_ratios", {"key": "bf16"}),
          quantity="dense BF16 datasheet rate ratio of every GPU pair of consecutive generations with a "
                   "datasheet here (A100-40/80GB -> H100/H200, H100/H200 -> B200/GB200), the pair farthest "
                   "from 2x",
          note="Hopper -> Blackwell is 2.27-2.53x, inside or near the band; Ampere -> Hopper is 3.17x for "
               "every pair, which the 'about 2x' wording does not cover"),
    Claim("fp4_2x_fp8_throughput",
          "Native FP4 doubles tensor-core throughput against FP8 (Blackwell).",
          2, "x", PAGE, "vendor", "B200", "Native FP4, and what 'native' buys", stated(2), None,
          technique="block_scaled_formats", runs_on=("B200",),
          projection="suite.claims.projections:fp4_over_fp8_b200",
          note="the H200 (Hopper) has no FP4 tensor cores (its lowest tensor-core precision is FP8), "
               "so no FP4 instruction runs here; block_scaled_formats measures the formats' numerics only"),
    Claim("fp4_2x_fp8_weight_bytes",
          "Native FP4 doubles parameter bandwidth and model size per GPU against FP8.",
          2, "x", PAGE, "arithmetic", "B200", "Native FP4, and what 'native' buys", stated(2),
          Arithmetic(f"{A}:fp4_weight_bytes_ratio", {"fp8": "MXFP8", "fp4": "NVFP4"}),
          quantity="MXFP8 bits per weight / NVFP4 bits per weight, both formats' block scales charged",
          technique="block_scaled_formats",
          note="the 2x holds for the payload; the scales cost NVFP4 0.5 bit and MXFP8 0.25 bit per weight "
               "(block_scaled_formats records each format's bits per element beside its error)"),
    Claim("rubin_3p5x_gb200",
          "Rubin: dense FP4 and FP8 throughput roughly 3.5x GB200, by NVIDIA's figures.",
          3.5, "x", "NVIDIA's Rubin announcement, as the page reports it (pre-release)", "vendor", "Rubin",
          "Native FP4, and what 'native' buys", about(3.5), None, runs_on=("Rubin",),
          projection="suite.claims.projections:no_datasheet",
          note="pre-release vendor multiplier; the page itself says treat it as a vendor number"),
    Claim("b200_227kb_smem_per_block",
          "A single B200 thread block can address up to 227 KB of shared memory.",
          227, "KB", PAGE, "vendor", "B200", "Thread block clusters and distributed shared memory",
          stated(227), None, runs_on=("B200",), projection="suite.claims.projections:no_datasheet",
          technique="cluster_dsmem", analog=Selector("cluster_dsmem", "smem_block_optin_kb", "triton_cta1"),
          analog_unit="KB one block may opt in to on the {gpu} (torch.cuda.get_device_properties; the "
                      "cluster_dsmem probe records the per-SM figure beside it)",
          note="a CUDA limit of the architecture; not a throughput, so no roofline applies"),
    Claim("nvfp4_block_32_or_128",
          "Blockwise quantization: a block of 32 or 128 weights, which is what K-quant formats and "
          "MXFP4/NVFP4 use.",
          (32, 128), "elements per scale", PAGE, "arithmetic", "any", "Quantization granularity",
          Band(32, 128, None, "'32 or 128' -> a block of 32..128 elements"),
          Arithmetic(f"{A}:format_block", {"fmt": "NVFP4"}),
          quantity="NVFP4's elements per scale block, from its defining document",
          note="MXFP4's 32 fits; NVFP4's 16 does not"),
    Claim("ffn_80pct_layer_params",
          "The MLP holds ~80% of a layer's parameters.",
          80, "%", PAGE, "arithmetic", "any", "Feed-forward network", about(80),
          Arithmetic(f"{A}:ffn_param_share", {}),
          quantity="FFN share of a Llama-3-8B layer's matrix parameters (config recalled)"),
)
