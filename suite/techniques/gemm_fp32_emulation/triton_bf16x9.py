"""BF16X9 on pre-split planes: a split kernel writes the pieces, one Triton GEMM sums the products."""
import torch

from suite.techniques.gemm_fp32_emulation.common import planes_matmul


def run(out: torch.Tensor, a: torch.Tensor, b: torch.Tensor) -> None:
    """out (M,N) fp32 = a (M,K) fp32 @ b (K,N) fp32."""
    planes_matmul(a, b, out, "bf16x9")
