"""exp2 by the degree-1 polynomial on the FMA units for every element (no MUFU)."""
import torch

from suite.techniques.exp_approx.common import launch

DEGREE, POLY_SIXTEENTHS = 1, 16


def run(out: torch.Tensor, x: torch.Tensor, kind: str, terms: int, delta: float) -> None:
    """out = the kernel `kind` on x ((n,) fp32 or (rows, cols) bf16) with this exp2 variant."""
    launch(out, x, kind, terms, delta, DEGREE, POLY_SIXTEENTHS)
