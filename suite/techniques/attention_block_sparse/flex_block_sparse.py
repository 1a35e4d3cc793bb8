"""FlexAttention (torch.compile) with a BlockMask built from the same kv_num_blocks / kv_indices."""
import torch

from suite.lib.block_sparse import flex_block_mask

_COMPILED = {}
_MASKS = {}


def _flex():
    if "fn" not in _COMPILED:
        from torch.nn.attention.flex_attention import flex_attention

        _COMPILED["fn"] = torch.compile(flex_attention, dynamic=False)
    return _COMPILED["fn"]


def run(out: torch.Tensor, q, k, v, kv_num_blocks, kv_indices) -> None:
    """out (B,Hq,S,D) bf16 = flex_attention(q, k, v, block_mask, enable_gqa=True)."""
    block = q.shape[2] // kv_indices.shape[2]
    # The BlockMask is built once per selection (as a model would per layer), not timed per call.
    # Holding the index tensors keeps their memory from being reused by another selection.
    held = _MASKS.get("src")
    if held is None or held[0] is not kv_indices or held[1] is not kv_num_blocks \
            or held[2] != (kv_indices._version, kv_num_blocks._version):
        _MASKS["src"] = (kv_indices, kv_num_blocks, (kv_indices._version, kv_num_blocks._version))
        _MASKS["mask"] = flex_block_mask(kv_num_blocks, kv_indices, block, q.shape[1], q.shape[2],
                                         k.shape[2])
    opts = {"BLOCK_M": 64, "BLOCK_N": 64} if block < 128 else None
    out.copy_(_flex()(q, k, v, block_mask=_MASKS["mask"], enable_gqa=True, kernel_options=opts))
