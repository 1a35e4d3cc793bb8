"""Morton (Z-order) codes: interleave the bits of 2-D / 3-D integer coordinates."""
from __future__ import annotations

import torch


def _spread(x: torch.Tensor, stride: int, bits: int) -> torch.Tensor:
    """Put bit i of x at bit i*stride (int64)."""
    out = torch.zeros_like(x)
    for i in range(bits):
        out |= ((x >> i) & 1) << (i * stride)
    return out


def morton_encode2(row: torch.Tensor, col: torch.Tensor, bits: int = 16) -> torch.Tensor:
    """(row, col) int64 -> Z-order index: col bits at even positions, row bits at odd ones."""
    return _spread(col.long(), 2, bits) | (_spread(row.long(), 2, bits) << 1)


def morton_decode2(code: torch.Tensor, bits: int = 16) -> tuple[torch.Tensor, torch.Tensor]:
    """Z-order index int64 -> (row, col) int64; the inverse of morton_encode2."""
    code = code.long()
    row, col = torch.zeros_like(code), torch.zeros_like(code)
    for i in range(bits):
        col |= ((code >> (2 * i)) & 1) << i
        row |= ((code >> (2 * i + 1)) & 1) << i
    return row, col


def morton_encode3(x: torch.Tensor, bits: int = 10) -> torch.Tensor:
    """Points in [0,1)^3, (..., 3) float -> (...) int64 Z-order codes on a 2^bits grid per axis."""
    cells = (x * (1 << bits)).long().clamp(0, (1 << bits) - 1)
    return (_spread(cells[..., 0], 3, bits) | (_spread(cells[..., 1], 3, bits) << 1)
            | (_spread(cells[..., 2], 3, bits) << 2))
