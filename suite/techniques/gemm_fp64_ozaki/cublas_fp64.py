"""Native FP64 GEMM: torch.matmul on float64 (cuBLAS DGEMM on the FP64 tensor cores)."""
import torch


def run(out: torch.Tensor, a: torch.Tensor, b: torch.Tensor) -> None:
    """out (M,N) fp64 = a (M,K) fp64 @ b (K,N) fp64."""
    torch.matmul(a, b, out=out)
