"""FP64 GEMM as the Ozaki scheme: `slices` int8 slices per operand on the int8 tensor cores
(torch._int_mm), the slice products grouped into one GEMM per weight."""
import torch

from suite.techniques.gemm_fp64_ozaki.common import int_mm, ozaki_matmul


def run(out: torch.Tensor, a: torch.Tensor, b: torch.Tensor, slices: int) -> None:
    """out (M,N) fp64 = a (M,K) fp64 @ b (K,N) fp64."""
    out.copy_(ozaki_matmul(a, b, slices, int_mm))
