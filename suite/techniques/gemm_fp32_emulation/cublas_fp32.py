"""torch.matmul on fp32 operands with fp32_precision="ieee" (cuBLAS on the GPU)."""
import torch

from suite.lib.planes import fp32_precision


def run(out: torch.Tensor, a: torch.Tensor, b: torch.Tensor) -> None:
    """out (M,N) fp32 = a (M,K) fp32 @ b (K,N) fp32."""
    with fp32_precision("ieee"):
        torch.matmul(a, b, out=out)
