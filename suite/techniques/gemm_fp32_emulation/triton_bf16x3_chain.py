"""BF16X3 on planes with every product chained in the tensor-core accumulator across all of K
(no per-step IEEE add): larger tiles, but the accumulator's own rounding over a long chain."""
import torch

from suite.techniques.gemm_fp32_emulation.common import planes_matmul


def run(out: torch.Tensor, a: torch.Tensor, b: torch.Tensor) -> None:
    """out (M,N) fp32 = a (M,K) fp32 @ b (K,N) fp32."""
    planes_matmul(a, b, out, "bf16x3", promote=False)
