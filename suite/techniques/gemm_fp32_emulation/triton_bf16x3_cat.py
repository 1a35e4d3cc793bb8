"""BF16X3 on bf16 planes, each K step's products gathered into two K-concatenated tiles, so the
tensor cores run them as two dots instead of one dot a product."""
import torch

from suite.techniques.gemm_fp32_emulation.common import cat_matmul


def run(out: torch.Tensor, a: torch.Tensor, b: torch.Tensor) -> None:
    """out (M,N) fp32 = a (M,K) fp32 @ b (K,N) fp32."""
    cat_matmul(a, b, out, "bf16x3")
