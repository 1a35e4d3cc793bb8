"""Launchers of the FP32-emulation kernels: fp32 operands in, fp32 (M,N) out."""
from __future__ import annotations

import torch


def triton_matmul(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor, precision: str) -> None:
    """out (M,N) fp32 = a (M,K) fp32 @ b (K,N) fp32 with tl.dot(input_precision=precision)."""
    from suite.techniques.gemm_fp32_emulation.triton_gemm_kernel import launch

    launch(a, b, out, precision)


def split_planes(x: torch.Tensor, scheme: str) -> torch.Tensor:
    """fp32 (R,C) -> (pieces,R,C) planes: bf16 for bf16 schemes, tf32-valued fp32 for tf32x3."""
    from suite.techniques.gemm_fp32_emulation.triton_planes_kernel import split

    return split(x, scheme)


def planes_matmul(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor, scheme: str,
                  promote: bool = True) -> None:
    """out (M,N) fp32 = a (M,K) @ b (K,N), fp32 operands split into planes first, then one GEMM."""
    from suite.techniques.gemm_fp32_emulation.triton_planes_kernel import gemm

    gemm(split_planes(a, scheme), split_planes(b, scheme), out, scheme, promote)


def cat_matmul(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor, scheme: str) -> None:
    """out (M,N) fp32 = a (M,K) @ b (K,N): bf16 planes, each step's products as two wide dots."""
    from suite.techniques.gemm_fp32_emulation.triton_cat_kernel import gemm

    gemm(split_planes(a, scheme), split_planes(b, scheme), out, scheme)


def regsplit_matmul(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor, scheme: str) -> None:
    """out (M,N) fp32 = a (M,K) @ b (K,N), each fp32 tile split into bf16 pieces in registers."""
    from suite.techniques.gemm_fp32_emulation.triton_regsplit_kernel import launch

    launch(a, b, out, scheme)
