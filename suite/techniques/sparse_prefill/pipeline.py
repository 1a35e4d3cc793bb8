"""A block selector, then our Triton block-sparse kernel, over a whole causal prefill."""
import torch

from suite.lib.block_sparse_kernel import block_sparse_attention
from suite.lib.selectors import select


def run(out: torch.Tensor, q, k, v, block: int, density: float, selector: str) -> None:
    """out (B,Hq,S,D) bf16 = causal attention of q over the blocks `selector` keeps."""
    num, idx = select(selector, q, k, block, density)
    block_sparse_attention(q, k, v, num, idx, block, out=out)
