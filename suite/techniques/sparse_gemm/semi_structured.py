"""2:4 semi-structured sparse GEMM through torch's SparseSemiStructuredTensor (cuSPARSELt), called as
torch.nn.functional.linear, the path torch documents for it."""
from __future__ import annotations

import torch


def run(out, x, backend: str, **inputs) -> None:
    """out (M,N) bf16 = x (M,K) bf16 @ w^T, w (N,K) 2:4 compressed by `backend` ("cusparselt")."""
    key = f"w24_{backend}"
    if key not in inputs:
        raise RuntimeError(f"this torch build could not compress a 2:4 weight for {backend}")
    out.copy_(torch.nn.functional.linear(x, inputs[key]))
