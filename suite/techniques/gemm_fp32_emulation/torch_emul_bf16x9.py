"""BF16X9 emulated in torch: split, exact piece products as fp32 IEEE GEMMs (the CPU reference)."""
import torch

from suite.lib.planes import emulate


def run(out: torch.Tensor, a: torch.Tensor, b: torch.Tensor) -> None:
    """out (M,N) fp32 = a (M,K) fp32 @ b (K,N) fp32."""
    out.copy_(emulate(a, b, "bf16x9"))
