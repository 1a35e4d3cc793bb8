"""A block selector (suite/lib/selectors.py) written out as a block mask."""
import torch

from suite.lib.block_sparse import dense_block_mask
from suite.lib.selectors import select


def run(out: torch.Tensor, q, k, block: int, density: float, selector: str) -> None:
    """out (B,Hkv,nQB,nKB) fp32 = 1 where `selector` keeps a block, else 0."""
    out.copy_(dense_block_mask(*select(selector, q, k, block, density)))
