"""Symmetric INT4 with fp16 scales per group of `group` elements along the last dimension, and its
packing for a W4A16 GEMM: eight 4-bit codes per int32 along K."""
from __future__ import annotations

import torch

QMAX = 7  # symmetric: codes -7..7 (amax maps to 7); stored with an offset of 8 as 1..15


def group_scales(x: torch.Tensor, group: int) -> torch.Tensor:
    """(R, C) float -> (R, C // group) fp16 scales amax / 7 (a zero group gets scale 0)."""
    r, c = x.shape
    amax = x.float().abs().reshape(r, c // group, group).amax(-1)
    return (amax / torch.full_like(amax, QMAX)).to(torch.float16)  # a tensor divisor: IEEE on CUDA too


def quantize(x: torch.Tensor, scales: torch.Tensor) -> torch.Tensor:
    """(R, C) float and (R, G) fp16 scales -> (R, C) int8 codes in [-7, 7], round half to even.

    Each value is divided by its group's stored (fp16-rounded) scale; the rounded scale can be
    slightly below amax / 7, so the largest element may round to 8 and saturates at 7."""
    r, c = x.shape
    s = scales.float().repeat_interleave(c // scales.shape[1], dim=1)
    q = torch.where(s > 0, x.float() / torch.where(s > 0, s, 1.0), 0.0)
    return torch.round(q).clamp_(-QMAX, QMAX).to(torch.int8)


def dequantize(q: torch.Tensor, scales: torch.Tensor) -> torch.Tensor:
    """(R, C) int8 codes and (R, G) fp16 scales -> (R, C) fp32 values q * s (exact in fp32)."""
    c = q.shape[1]
    return q.float() * scales.float().repeat_interleave(c // scales.shape[1], dim=1)


def pack_k(q: torch.Tensor) -> torch.Tensor:
    """(N, K) int8 codes in [-8, 7] -> (K // 8, N) int32; nibble j of word i holds k = 8 i + j."""
    n, k = q.shape
    u = (q.to(torch.int64) + 8).t().reshape(k // 8, 8, n)  # (K/8, 8, N), values 0..15
    shifts = (4 * torch.arange(8, device=q.device, dtype=torch.int64)).view(1, 8, 1)
    word = (u << shifts).sum(1)  # disjoint nibbles: the sum is the bitwise or, < 2**32
    return torch.where(word >= 1 << 31, word - (1 << 32), word).to(torch.int32)  # same bits, int32


def unpack_k(packed: torch.Tensor) -> torch.Tensor:
    """(K // 8, N) int32 -> (N, K) int8 codes in [-8, 7] (inverse of pack_k)."""
    kw, n = packed.shape
    shifts = (4 * torch.arange(8, device=packed.device, dtype=torch.int32)).view(1, 8, 1)
    u = (packed.unsqueeze(1) >> shifts) & 0xF  # arithmetic shift, then the low nibble
    return (u - 8).to(torch.int8).reshape(kw * 8, n).t().contiguous()
