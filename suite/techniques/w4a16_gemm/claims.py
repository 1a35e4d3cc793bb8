"""Claims this technique measures (page: "Fused epilogues and prologues"; Marlin as the anchor)."""
from suite.claims.spec import Band, Claim, Projection, Selector, at_least

T = "w4a16_gemm"
SECTION = "Fused epilogues and prologues"
MARLIN = ("Frantar, Castro, Chen, Hoefler, Alistarh: MARLIN: Mixed-Precision Auto-Regressive Parallel "
          "Inference on Large Language Models (arXiv 2408.11743, 2024)")
# Batch 16: the smallest M where every decode row of a 16-row MMA tile is used. The fused kernel
# judged is the decode-shaped one (built for M <= 16; faster than triton_w4a16 there on the H200).
FUSED = "triton_w4a16_decode"
FUSED_OVER_BF16 = Selector(T, "latency_ms", FUSED, over="cublas_bf16", speedup=True,
                           params={"m": 16}, reduce="worst")


def weight_bytes_ratio(analog: float | None) -> Projection:
    """The memory-bound ceiling of W4A16 over bf16 at small M: bf16 weight bytes / (4-bit codes +
    fp16 scale per 128), activations and output neglected (M <= 16)."""
    ceiling = 16 / (4 + 16 / 128)
    return Projection(ceiling, "x", f"16 bits / (4 + 16/128) bits per weight = {ceiling:.2f}x: the "
                      "speedup if both GEMMs stream their weights at the same bandwidth"
                      + (f"; ours on the H200 at M = 16: {analog:.2f}x" if analog else ""),
                      ("arithmetic on the formats; no datasheet rate enters",))


CLAIMS = (
    Claim("w4a16_fused_beats_unfused",
          "Unfused, quantize and dequantize are a full round trip to HBM; fusing dequantization into "
          "the mainloop is how a W4A16 kernel gets to be worth having at all.",
          1, "x dequantize-then-GEMM", "the page", "ours", "any", SECTION,
          at_least(1.0, wording="'worth having' -> the fused kernel is faster than the unfused "
                   "pair at decode (M = 16), on every Llama layer shape"),
          Selector(T, "latency_ms", FUSED, over=("triton_dequant_cublas", "torch_dequant_cublas"),
                   speedup=True, params={"m": 16}, reduce="worst"),
          technique=T, quantity="unfused latency (best of one Triton dequantize pass + cuBLAS, and "
          "torch ops + cuBLAS) / fused W4A16 latency, M = 16, worst Llama layer shape"),
    Claim("marlin_near_4x_to_batch_16",
          "A fused W4A16 kernel reaches close to the ideal 4x over FP16 up to batch sizes of 16-32.",
          4, "x FP16 GEMM", MARLIN, "authors", "A10", SECTION,
          Band(3.4, 4.0, "below", "'close to the ideal 4x' -> 85-100% of 4x; less is 'not reproduced'"),
          FUSED_OVER_BF16, technique=T, runs_on=("A10",), analog=FUSED_OVER_BF16,
          analog_unit="x cuBLAS bf16 on the {gpu} at M = 16, worst Llama layer shape (our target: >= 3x)",
          projection=f"suite.techniques.{T}.claims:weight_bytes_ratio", recalled=True,
          quantity="fused W4A16 speedup over the FP16/BF16 GEMM at batch 16"),
)
