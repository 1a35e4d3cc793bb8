"""RoPE in torch ops: cos/sin from an fp32 or bf16 table, or from angles computed per call in fp32 or
(wrongly) bf16; `swap` applies the other pairing convention (a checkpoint read the wrong way)."""
from __future__ import annotations

import torch

from suite.lib import rope

OTHER = {"neox": "interleaved", "interleaved": "neox"}


def cos_sin(pos, cos32, sin32, cos16, sin16, inv_freq, source: str):
    """(cos, sin) rows (T, r/2) for the positions, from `source`: table_fp32, table_bf16, angles_fp32, angles_bf16."""
    p = pos.long()
    if source == "table_fp32":
        return cos32[p], sin32[p]
    if source == "table_bf16":
        return cos16[p], sin16[p]
    dt = torch.float32 if source == "angles_fp32" else torch.bfloat16
    ang = pos.to(dt)[:, None] * inv_freq.to(dt)[None, :]  # m * theta_i in dt, as engines that skip fp64 do
    return ang.cos(), ang.sin()


def run(out, x, pos, cos32, sin32, cos16, sin16, inv_freq, layout: str, rot: int,
        source: str = "table_fp32", swap: bool = False) -> None:
    """out (T,H,D) bf16 = RoPE(x (T,H,D) bf16) on the first rot dims, in the dtype of the cos/sin source."""
    c, s = cos_sin(pos, cos32, sin32, cos16, sin16, inv_freq, source)
    rope.rotate_into(out, x, c, s, OTHER[layout] if swap else layout)


def qkv_then_rope(out, x, w_qkv, pos, cos32, sin32, head_dim: int, rot_heads: int) -> None:
    """out (T,N) = x @ W_qkv (cuBLAS, written out), then Q and K heads rotated in place (NeoX) by torch ops."""
    torch.mm(x, w_qkv, out=out)
    qk = out.view(x.shape[0], -1, head_dim)[:, :rot_heads]
    p = pos.long()
    c, s = cos32[p][:, None, :], sin32[p][:, None, :]
    x1, x2 = rope.halves(qk, head_dim, "neox")
    y1, y2 = x1 * c - x2 * s, x2 * c + x1 * s
    x1.copy_(y1)
    x2.copy_(y2)
