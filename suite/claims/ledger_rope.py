"""RoPE table arithmetic (page: "RoPE efficiency"): checked by recomputing it."""
import math

from suite.claims.spec import Arithmetic, Claim, about, at_least, rounded

SECTION = "RoPE efficiency"
PAGE = "the page's RoPE arithmetic"
A = "suite.claims.arithmetic"

CLAIMS = (
    Claim("rope_4_flops_per_element",
          "Rotating a query or key is roughly four FLOPs per element — two multiplies and an add.",
          4, "FLOPs/element", PAGE, "arithmetic", "any", SECTION, about(4),
          Arithmetic(f"{A}:rope_flops", {"multiplies": 2, "adds": 1}),
          quantity="FLOPs in the page's own breakdown",
          note="the page's point (memory traffic, not arithmetic, is the cost) stands at 3 or 4"),
    Claim("rope_table_16p8m_values",
          "At 128k positions and head_dim 128 (64 pairs per head) the cos and sin tables hold "
          "2 x 131,072 x 64 ~ 16.8M values.",
          16.8, "M values", PAGE, "arithmetic", "any", SECTION, rounded(16.8, 0.05),
          Arithmetic(f"{A}:rope_table", {"positions": 131_072, "head_dim": 128})),
    Claim("rope_table_67mb_fp32", "The RoPE tables take 67 MB in fp32.", 67, "MB", PAGE, "arithmetic", "any",
          SECTION, rounded(67, 0.5), Arithmetic(f"{A}:rope_table", {"bytes_per_value": 4}),
          quantity="MB = 1e6 bytes (64 MiB)"),
    Claim("rope_table_34mb_fp16", "The RoPE tables take 34 MB in fp16.", 34, "MB", PAGE, "arithmetic", "any",
          SECTION, rounded(34, 0.5), Arithmetic(f"{A}:rope_table", {"bytes_per_value": 2}),
          quantity="MB = 1e6 bytes"),
    Claim("rope_bf16_angle_at_100k",
          "m * base^(-2i/d) at m = 100,000 needs more mantissa than bf16 has: compute angles in fp32.",
          100_000, "position", PAGE, "arithmetic", "any", SECTION,
          at_least(math.pi, wording="bf16's gap near 1e5 wider than pi radians makes the angle meaningless"),
          Arithmetic(f"{A}:bf16_spacing", {"x": 100_000.0}),
          quantity="gap between adjacent bf16 values near 100,000, in radians"),
)
