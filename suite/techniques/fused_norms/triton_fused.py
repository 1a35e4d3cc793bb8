"""The one-pass Triton norm (suite.lib.norm_triton) on the technique's operands."""
from __future__ import annotations

from suite.lib.norm_triton import norm


def run(out, x, residual, weight, bias, kind: str, eps: float) -> None:
    """out (2|1,T,H) bf16 = (norm(x + residual) * weight [+ bias], x + residual), one kernel."""
    norm(out[0], x, weight, bias if kind == "layer" else None, residual,
         out[1] if residual is not None else None, eps, layer=kind == "layer")
