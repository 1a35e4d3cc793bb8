"""Needle pipeline: selector 'zeta_morton', then our Triton block-sparse kernel on the question block."""
import torch

from suite.lib.block_sparse_kernel import block_sparse_attention
from suite.lib.selectors import zeta_morton

SELECTOR = "zeta_morton"


def run(out: torch.Tensor, q, k, v, block: int, density: float) -> None:
    """out (1,Hq,Bq,D) bf16 = attention of the question queries over the selected KV blocks."""
    num, idx = zeta_morton(q, k, block, density)
    block_sparse_attention(q, k, v, num, idx, block, out=out)
