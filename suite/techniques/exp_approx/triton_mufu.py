"""Hardware exp2: tl.math.exp2, one MUFU.EX2 (ex2.approx.ftz.f32) per element."""
import torch

from suite.techniques.exp_approx.common import launch

DEGREE, POLY_SIXTEENTHS = 0, 0


def run(out: torch.Tensor, x: torch.Tensor, kind: str, terms: int, delta: float) -> None:
    """out = the kernel `kind` on x ((n,) fp32 or (rows, cols) bf16) with this exp2 variant."""
    launch(out, x, kind, terms, delta, DEGREE, POLY_SIXTEENTHS)
