"""RoPE with Triton: the standalone kernel (suite/lib/rope_triton.py), cuBLAS QKV then that kernel in
place, and the QKV GEMM with the rotation in its epilogue (suite/lib/dual_gemm_triton.py)."""
from __future__ import annotations

import torch

from suite.lib.dual_gemm_triton import gemm_rope
from suite.lib.rope_triton import rope


def run(out, x, pos, cos32, sin32, cos16, sin16, inv_freq, layout: str, rot: int, source: str = "table_fp32") -> None:
    """out (T,H,D) bf16 = RoPE(x) on the first rot dims; cos/sin from the fp32 table or computed in the kernel."""
    if source == "on_the_fly":
        rope(out, x, pos, rot, layout, inv_freq=inv_freq)
    else:
        rope(out, x, pos, rot, layout, cos32, sin32)


def qkv_then_rope(out, x, w_qkv, pos, cos32, sin32, head_dim: int, rot_heads: int) -> None:
    """out (T,N) = x @ W_qkv (cuBLAS), then the Triton RoPE kernel in place on the Q and K heads."""
    torch.mm(x, w_qkv, out=out)
    qk = out.view(x.shape[0], -1, head_dim)[:, :rot_heads]
    rope(qk, qk, pos, head_dim, "neox", cos32, sin32)


def qkv_fused(out, x, w_qkv, pos, cos32, sin32, head_dim: int, rot_heads: int) -> None:
    """out (T,N) = x @ W_qkv with Q and K rotated in the GEMM's epilogue (one kernel, one write)."""
    gemm_rope(out, x, w_qkv, pos, cos32, sin32, head_dim, rot_heads)
