"""Plane splitting for FP32 GEMM emulation: operand splits, the product set of each scheme,
the fp32 matmul precision switch, and the scheme in torch."""
from __future__ import annotations

import contextlib

import torch

# Pieces per operand and the (i, j) piece products each scheme keeps (0 = hi, 1 = mid, 2 = lo).
# BF16x6 keeps the products with i + j <= 2; BF16x3 and TF32x3 keep hi*hi, hi*lo, lo*hi of a 2-way split.
SCHEMES: dict[str, tuple[int, tuple[tuple[int, int], ...]]] = {
    "bf16x3": (2, ((0, 0), (0, 1), (1, 0))),
    "tf32x3": (2, ((0, 0), (0, 1), (1, 0))),
    "bf16x6": (3, ((0, 0), (0, 1), (1, 0), (0, 2), (2, 0), (1, 1))),
    "bf16x9": (3, tuple((i, j) for i in range(3) for j in range(3))),
}


@contextlib.contextmanager
def fp32_precision(mode: str):
    """Set torch's fp32 matmul precision ("ieee" or "tf32") for the block, then restore it."""
    m = torch.backends.cuda.matmul
    old = m.fp32_precision
    m.fp32_precision = mode
    try:
        yield
    finally:
        m.fp32_precision = old


def round_bf16(x: torch.Tensor) -> torch.Tensor:
    """fp32 -> nearest bf16 value (ties to even), kept in fp32 (same shape)."""
    return x.to(torch.bfloat16).to(torch.float32)


def round_tf32(x: torch.Tensor) -> torch.Tensor:
    """fp32 -> nearest tf32 value (10 explicit mantissa bits, ties to even), kept in fp32."""
    bits = x.contiguous().view(torch.int32)
    # Round to nearest even on the 13 dropped bits, then clear them.
    bias = 0x0FFF + ((bits >> 13) & 1)
    return ((bits + bias) & ~0x1FFF).view(torch.float32)


def split(x: torch.Tensor, parts: int, rounder=round_bf16) -> list[torch.Tensor]:
    """Split fp32 x into `parts` pieces, each exactly representable in the lower format."""
    pieces, rest = [], x
    for _ in range(parts):
        p = rounder(rest)
        pieces.append(p)
        rest = rest - p
    return pieces


def emulate(a: torch.Tensor, b: torch.Tensor, scheme: str) -> torch.Tensor:
    """The scheme in torch: split, exact piece products as fp32 IEEE GEMMs, smallest first (M,N) fp32."""
    parts, pairs = SCHEMES[scheme]
    rounder = round_tf32 if scheme.startswith("tf32") else round_bf16
    pa, pb = split(a, parts, rounder), split(b, parts, rounder)
    acc = torch.zeros(a.shape[0], b.shape[1], device=a.device)
    with fp32_precision("ieee"):
        for i, j in sorted(pairs, key=lambda ij: -(ij[0] + ij[1])):
            acc += pa[i] @ pb[j]
    return acc
