"""Selector 'msa_index' (see common.py), written out as a block mask."""
import torch

from suite.lib.block_sparse import dense_block_mask
from suite.lib.selectors import msa_index

SELECTOR = "msa_index"


def run(out: torch.Tensor, q, k, block: int, density: float) -> None:
    """out (B,Hkv,nQB,nKB) fp32 = 1 where the selector keeps a block, else 0."""
    out.copy_(dense_block_mask(*msa_index(q, k, block, density)))
