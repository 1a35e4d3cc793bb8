"""BF16X6 split in registers: fp32 tiles are cut into bf16 pieces inside the GEMM (no planes)."""
import torch

from suite.techniques.gemm_fp32_emulation.common import regsplit_matmul


def run(out: torch.Tensor, a: torch.Tensor, b: torch.Tensor) -> None:
    """out (M,N) fp32 = a (M,K) fp32 @ b (K,N) fp32."""
    regsplit_matmul(a, b, out, "bf16x6")
