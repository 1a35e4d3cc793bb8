"""Needle pipeline: a block selector, then our Triton block-sparse kernel on the question block."""
import torch

from suite.lib.block_sparse_kernel import block_sparse_attention
from suite.lib.selectors import select


def run(out: torch.Tensor, q, k, v, block: int, density: float, selector: str) -> None:
    """out (1,Hq,Bq,D) bf16 = attention of the question queries over the blocks `selector` keeps."""
    num, idx = select(selector, q, k, block, density)
    block_sparse_attention(q, k, v, num, idx, block, out=out)
