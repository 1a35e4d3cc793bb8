"""bf16 GEMM, output tiles visited in row_major order."""
import torch

from suite.lib.interp import interpreting
from suite.techniques.morton_order.triton_tiled_gemm import gemm


def run(out: torch.Tensor, a, b) -> None:
    """out (M,N) bf16 = a (M,K) bf16 @ b (K,N) bf16."""
    gemm(a, b, out, "row_major", interpreting())
