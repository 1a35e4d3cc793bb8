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


# Bit i of a 21-bit integer to bit 3i in five shift-or-mask steps (each step halves the distance between
# the groups of bits it moves: 16, 8, 4, 2, then single bits), instead of one step per bit.
_SPREAD3 = ((32, 0x1F00000000FFFF), (16, 0x1F0000FF0000FF), (8, 0x100F00F00F00F00F), (4, 0x10C30C30C30C30C3),
            (2, 0x1249249249249249))


def _spread3(x: torch.Tensor) -> torch.Tensor:
    """Put bit i of x (int64, each value below 2**21) at bit 3i."""
    for shift, mask in _SPREAD3:
        x = (x | (x << shift)) & mask
    return x


def morton_encode3(x: torch.Tensor, bits: int = 10) -> torch.Tensor:
    """Points in [0,1)^3, (..., 3) float -> (...) int64 Z-order codes on a 2^bits grid per axis (bits <= 21)."""
    if not 0 < bits <= 21:
        raise ValueError(f"3-D Morton codes take 1-21 bits per axis (63 in all), not {bits}")
    spread = _spread3((x * (1 << bits)).long().clamp(0, (1 << bits) - 1))  # the three axes at once
    return spread[..., 0] | (spread[..., 1] << 1) | (spread[..., 2] << 2)
