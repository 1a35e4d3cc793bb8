"""The torch implementations: GELU (exact or tanh), SwiGLU unfused, gate/up as two GEMMs or one merged GEMM."""
from __future__ import annotations

import torch
import torch.nn.functional as F


def gelu(out, x, approximate: str = "none") -> None:
    """out = GELU(x) by torch's kernel (exact or tanh); x, out any shape, same dtype."""
    torch._C._nn.gelu(x, approximate=approximate, out=out)  # F.gelu without a temporary


def swiglu(out, gate_up) -> None:
    """out (T,I) = silu(gate) * up, two kernels (silu writes a temporary, then the multiply)."""
    i = out.shape[1]
    torch.mul(F.silu(gate_up[:, :i]), gate_up[:, i:], out=out)


def gate_up(out, x, w_gate, w_up, w_gu, merged: bool = False) -> None:
    """out (T,I) = silu(x @ W_gate) * (x @ W_up): two GEMMs, or one over W_gu = [W_gate | W_up]
    (one read of x, one launch) split afterwards; then the unfused SwiGLU."""
    if merged:
        swiglu(out, x @ w_gu)
    else:
        torch.mul(F.silu(x @ w_gate), x @ w_up, out=out)
