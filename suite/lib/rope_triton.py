"""Standalone RoPE in Triton: one program per token rotates every head's first r dims (NeoX split-half
or interleaved pairs) and copies the rest; cos/sin from fp32 or bf16 tables, or computed in the kernel
from fp32 angles m * inv_freq. May run in place (out is x)."""
from __future__ import annotations

import torch
import triton
import triton.language as tl

from suite.lib.interp import interpreting
from suite.lib.rope import LAYOUTS
from suite.lib.triton_round import round_bf16


@triton.jit
def _rope_row(x_ptr, o_ptr, pos_ptr, cos_ptr, sin_ptr, freq_ptr, H, D, R2, sx_t, sx_h, so_t, so_h, s_tab,
              INTERLEAVED: tl.constexpr, ON_THE_FLY: tl.constexpr, HB: tl.constexpr, PB: tl.constexpr,
              TB: tl.constexpr, ROUND: tl.constexpr):
    t = tl.program_id(0).to(tl.int64)
    hb = tl.program_id(1) * HB + tl.arange(0, HB)
    i = tl.arange(0, PB)
    pm = i < R2
    if INTERLEAVED:
        d1, d2 = 2 * i, 2 * i + 1
    else:
        d1, d2 = i, i + R2
    pos = tl.load(pos_ptr + t)
    if ON_THE_FLY:
        ang = pos.to(tl.float32) * tl.load(freq_ptr + i, mask=pm, other=0.0)
        # Reduce to [-pi, pi] before cos/sin (the GPU's fast sin/cos are accurate only near 0):
        # 2 pi = 6.28125 (8 significant bits, so k * 6.28125 is exact for k < 2^16) + a small remainder.
        k = tl.floor(ang * 0.15915494309189535 + 0.5)
        ang = (ang - k * 6.28125) - k * 0.0019353071795864769
        c, s = tl.cos(ang), tl.sin(ang)
    else:
        c = tl.load(cos_ptr + pos.to(tl.int64) * s_tab + i, mask=pm, other=0.0).to(tl.float32)
        s = tl.load(sin_ptr + pos.to(tl.int64) * s_tab + i, mask=pm, other=0.0).to(tl.float32)
    m = (hb < H)[:, None] & pm[None, :]
    xr = x_ptr + t * sx_t + hb[:, None] * sx_h
    orow = o_ptr + t * so_t + hb[:, None] * so_h
    x1 = tl.load(xr + d1[None, :], mask=m, other=0.0).to(tl.float32)
    x2 = tl.load(xr + d2[None, :], mask=m, other=0.0).to(tl.float32)
    y1 = x1 * c[None, :] - x2 * s[None, :]
    y2 = x2 * c[None, :] + x1 * s[None, :]
    if ROUND:  # the CPU interpreter's fp32 -> bf16 cast truncates
        y1, y2 = round_bf16(y1), round_bf16(y2)
    tl.store(orow + d1[None, :], y1.to(o_ptr.dtype.element_ty), mask=m)
    tl.store(orow + d2[None, :], y2.to(o_ptr.dtype.element_ty), mask=m)
    if TB > 0:  # partial RoPE: dims 2 R2 .. D pass through
        j = 2 * R2 + tl.arange(0, TB)
        mt = (hb < H)[:, None] & (j < D)[None, :]
        tl.store(orow + j[None, :], tl.load(xr + j[None, :], mask=mt, other=0.0), mask=mt)


def rope(out: torch.Tensor, x: torch.Tensor, pos: torch.Tensor, rot: int, layout: str = "neox",
         cos: torch.Tensor | None = None, sin: torch.Tensor | None = None,
         inv_freq: torch.Tensor | None = None) -> None:
    """out (T,H,D) = RoPE of x (T,H,D) at positions pos (T,) on the first rot dims; tables cos, sin
    (P, rot/2) fp32 or bf16, or (both None) angles pos * inv_freq (rot/2,) fp32 in the kernel.
    x and out need unit stride along D; out may be x."""
    if layout not in LAYOUTS:
        raise ValueError(f"unknown RoPE layout {layout!r}; known: {LAYOUTS}")
    t, h, d = x.shape
    r2 = rot // 2
    fly = cos is None
    if fly and inv_freq is None:
        raise ValueError("RoPE without tables needs inv_freq")
    tab = inv_freq if fly else cos
    pb = triton.next_power_of_2(r2)
    tb = triton.next_power_of_2(d - rot) if d > rot else 0
    hb = max(1, min(triton.next_power_of_2(h), 4096 // pb))
    _rope_row[(t, triton.cdiv(h, hb))](
        x, out, pos, tab, sin if not fly else tab, inv_freq if fly else tab, h, d, r2,
        x.stride(0), x.stride(1), out.stride(0), out.stride(1), 0 if fly else cos.stride(0),
        INTERLEAVED=layout == "interleaved", ON_THE_FLY=fly, HB=hb, PB=pb, TB=tb,
        ROUND=interpreting() and out.dtype == torch.bfloat16, num_warps=4)
