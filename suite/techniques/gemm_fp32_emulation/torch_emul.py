"""A scheme emulated in torch: split, exact piece products as fp32 IEEE GEMMs (the CPU reference)."""
import torch

from suite.lib.planes import emulate


def run(out: torch.Tensor, a: torch.Tensor, b: torch.Tensor, scheme: str) -> None:
    """out (M,N) fp32 = a (M,K) fp32 @ b (K,N) fp32 under `scheme` ("bf16x9", "bf16x6", ...)."""
    out.copy_(emulate(a, b, scheme))
