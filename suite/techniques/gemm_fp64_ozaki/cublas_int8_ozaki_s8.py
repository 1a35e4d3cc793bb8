"""FP64 GEMM as the Ozaki scheme with 8 int8 slices per operand on the int8 tensor cores
(torch._int_mm), 36 slice products grouped into 8 GEMMs by weight."""
import torch

from suite.techniques.gemm_fp64_ozaki.common import int_mm, ozaki_matmul


def run(out: torch.Tensor, a: torch.Tensor, b: torch.Tensor) -> None:
    """out (M,N) fp64 = a (M,K) fp64 @ b (K,N) fp64."""
    out.copy_(ozaki_matmul(a, b, 8, int_mm))
