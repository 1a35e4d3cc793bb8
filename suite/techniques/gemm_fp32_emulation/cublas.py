"""torch.matmul on fp32 operands under an fp32 matmul precision (cuBLAS on the GPU)."""
import torch

from suite.lib.planes import fp32_precision


def run(out: torch.Tensor, a: torch.Tensor, b: torch.Tensor, precision: str) -> None:
    """out (M,N) fp32 = a (M,K) fp32 @ b (K,N) fp32 with fp32_precision `precision` ("ieee", "tf32")."""
    with fp32_precision(precision):
        torch.matmul(a, b, out=out)
