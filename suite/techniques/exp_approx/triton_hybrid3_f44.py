"""Hybrid exp2: 7/16 of the elements by the degree-3 polynomial, 9/16 by MUFU.EX2."""
import torch

from suite.techniques.exp_approx.common import launch

DEGREE, POLY_SIXTEENTHS = 3, 7


def run(out: torch.Tensor, x: torch.Tensor, kind: str, terms: int, delta: float) -> None:
    """out = the kernel `kind` on x ((n,) fp32 or (rows, cols) bf16) with this exp2 variant."""
    launch(out, x, kind, terms, delta, DEGREE, POLY_SIXTEENTHS)
