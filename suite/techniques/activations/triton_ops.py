"""The Triton implementations (kernels in suite/lib): GELU and SwiGLU in one pass, and the merged
gate/up GEMM with SwiGLU in its epilogue."""
from __future__ import annotations

from suite.lib import activations_triton, dual_gemm_triton


def gelu(out, x, approximate: str = "none") -> None:
    """out = GELU(x), one read and one write; approximate "none" (erf) or "tanh"."""
    activations_triton.gelu(out, x, approximate)


def swiglu(out, gate_up) -> None:
    """out (T,I) = silu(gate_up[:, :I]) * gate_up[:, I:], one kernel."""
    activations_triton.swiglu(out, gate_up)


def gate_up(out, x, w_gate, w_up, w_gu) -> None:
    """out (T,I) = silu(x @ W_gate) * (x @ W_up): one GEMM over W_gu, SwiGLU applied to the fp32 tiles."""
    dual_gemm_triton.gemm_swiglu(out, x, w_gu)
