"""Unstructured sparse GEMM: the weight in CSR (int32 indices), torch.mm -> cuSPARSE SpMM on CUDA;
in bf16, or with fp32 values and activations (the same numbers, exactly) rounded to bf16 at the end."""
from __future__ import annotations

import torch


def run(out, x, w_csr, x32=None, w_csr32=None, fp32: bool = False, **_) -> None:
    """out (M,N) bf16 = (w_csr (N,K) CSR @ x^T (K,M))^T; the transposes are views, one copy into out."""
    if fp32:
        x, w_csr = x32, w_csr32
    out.copy_(torch.mm(w_csr, x.t()).t())
