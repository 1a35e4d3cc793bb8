"""Online-softmax attention forward, degree-3 polynomial exp2 for every score."""
import torch

from suite.techniques.softmax_online.common import launch

EXP, DEGREE, THRESH = 1, 3, 0.0


def run(out: torch.Tensor, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool) -> None:
    """out (B,H,S,D) bf16 = softmax(q k^T / sqrt(D)) v, q/k/v (B,H,S,D) bf16."""
    launch(out, q, k, v, causal, EXP, DEGREE, THRESH)
