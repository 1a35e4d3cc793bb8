"""Shared math for FP32 GEMM emulation: operand splits, precision switch, one Triton GEMM."""
from __future__ import annotations

import contextlib
import os

import torch


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
    """fp32 -> nearest bf16 value, kept in fp32 (same shape)."""
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


def interpreting() -> bool:
    """True when Triton kernels run on the CPU under TRITON_INTERPRET=1."""
    return os.environ.get("TRITON_INTERPRET") == "1"


def triton_matmul(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor, precision: str) -> None:
    """out (M,N) fp32 = a (M,K) fp32 @ b (K,N) fp32 with tl.dot(input_precision=precision)."""
    from suite.techniques.gemm_fp32_emulation.triton_gemm_kernel import launch

    launch(a, b, out, precision)
