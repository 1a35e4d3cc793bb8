"""Rotary position embedding in torch: inverse frequencies, cos/sin tables, and the rotation in the two
pairing conventions (NeoX split-half: pairs (i, i + r/2); interleaved/GPT-J: pairs (2i, 2i+1)) on the
first r dimensions of each head (partial RoPE when r < head_dim)."""
from __future__ import annotations

import torch

LAYOUTS = ("neox", "interleaved")


def inv_freq(rot: int, base: float = 10000.0, dtype=torch.float64, device="cpu") -> torch.Tensor:
    """(rot/2,) base^(-2i/rot)."""
    return base ** (-torch.arange(0, rot, 2, dtype=torch.float64, device=device) / rot).to(dtype)


def tables(max_pos: int, rot: int, base: float = 10000.0, device="cpu") -> tuple[torch.Tensor, torch.Tensor]:
    """(cos, sin), each (max_pos, rot/2) fp64: angles m * base^(-2i/rot) computed in fp64."""
    ang = torch.arange(max_pos, dtype=torch.float64, device=device)[:, None] * inv_freq(rot, base, device=device)
    return ang.cos(), ang.sin()


def halves(x: torch.Tensor, rot: int, layout: str) -> tuple[torch.Tensor, torch.Tensor]:
    """Views (first, second) of the rot/2 rotated pairs along x's last dim."""
    if layout == "neox":
        return x[..., : rot // 2], x[..., rot // 2: rot]
    if layout == "interleaved":
        return x[..., 0:rot:2], x[..., 1:rot:2]
    raise ValueError(f"unknown RoPE layout {layout!r}; known: {LAYOUTS}")


def rotate_into(out: torch.Tensor, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, layout: str) -> None:
    """out (T,H,D) = x (T,H,D) with its first r = 2 * cos.shape[-1] dims rotated by cos, sin (T, r/2),
    computed in the promoted dtype of x and cos and rounded once into out; dims r..D copied."""
    rot = 2 * cos.shape[-1]
    x1, x2 = halves(x, rot, layout)
    o1, o2 = halves(out, rot, layout)
    c, s = cos[:, None, :], sin[:, None, :]
    o1.copy_(x1 * c - x2 * s)
    o2.copy_(x2 * c + x1 * s)
    if rot < x.shape[-1]:
        out[..., rot:].copy_(x[..., rot:])
