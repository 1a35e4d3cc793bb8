"""Selector 'dhsa_chunks' (see common.py), written out as a block mask."""
import torch

from suite.lib.block_sparse import dense_block_mask
from suite.lib.selectors import dhsa_chunks

SELECTOR = "dhsa_chunks"


def run(out: torch.Tensor, q, k, block: int, density: float) -> None:
    """out (B,Hkv,nQB,nKB) fp32 = 1 where the selector keeps a block, else 0."""
    out.copy_(dense_block_mask(*dhsa_chunks(q, k, block, density)))
