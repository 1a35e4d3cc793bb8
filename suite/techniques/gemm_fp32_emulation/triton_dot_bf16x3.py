"""Triton GEMM with tl.dot(input_precision="bf16x3") on fp32 operands."""
import torch

from suite.techniques.gemm_fp32_emulation.common import triton_matmul


def run(out: torch.Tensor, a: torch.Tensor, b: torch.Tensor) -> None:
    """out (M,N) fp32 = a (M,K) fp32 @ b (K,N) fp32."""
    triton_matmul(a, b, out, "bf16x3")
