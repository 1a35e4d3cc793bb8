"""The dense bf16 GEMM the 4-bit weights replace: torch.mm on bf16 weights (cuBLAS on the GPU)."""
from __future__ import annotations

import torch


def run(out, a, qweight, scales, w_bf16, qweight_k16=None) -> None:
    """out (M,N) bf16 = a (M,K) bf16 @ w_bf16 (N,K) bf16 ^T, as torch.nn.functional.linear does."""
    torch.mm(a, w_bf16.t(), out=out)
