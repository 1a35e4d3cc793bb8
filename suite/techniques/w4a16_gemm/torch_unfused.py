"""Unfused W4A16: unpack and dequantize the weights to bf16 in memory, then cuBLAS (torch.mm)."""
from __future__ import annotations

import torch

from suite.techniques.w4a16_gemm.reference import weights


def run(out, a, qweight, scales, w_bf16=None, qweight_k16=None) -> None:
    """out (M,N) bf16 = a (M,K) bf16 @ bf16(q * s)^T, the (N,K) bf16 weights materialised first."""
    torch.mm(a, weights(qweight, scales).to(torch.bfloat16).t(), out=out)
