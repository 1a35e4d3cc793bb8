"""Our Triton block-sparse attention forward over the given kv_num_blocks / kv_indices."""
import torch

from suite.lib.block_sparse_kernel import block_sparse_attention


def run(out: torch.Tensor, q, k, v, kv_num_blocks, kv_indices) -> None:
    """out (B,Hq,S,D) bf16 = causal attention of q over the selected blocks of k, v."""
    block = q.shape[2] // kv_indices.shape[2]
    block_sparse_attention(q, k, v, kv_num_blocks, kv_indices, block, out=out)
