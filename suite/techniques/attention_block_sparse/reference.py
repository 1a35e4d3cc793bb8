"""Oracle and inputs for block-sparse attention: masked dense attention over the same blocks."""
from __future__ import annotations

import torch

from suite.lib.block_sparse import masked_attention, random_blocks


def make_inputs(params: dict, seed: int, device: str) -> dict[str, torch.Tensor]:
    """q (B,Hq,S,D), k/v (B,Hkv,S,D) bf16 normal; a seeded random causal block selection at
    params["density"]: kv_num_blocks (B,Hkv,nQB), kv_indices (B,Hkv,nQB,nKB) int32."""
    g = torch.Generator(device=device).manual_seed(seed)
    b, hq, hkv, s, d, blk = (params[x] for x in ("b", "hq", "hkv", "s", "d", "block"))
    q = torch.randn(b, hq, s, d, generator=g, device=device).to(torch.bfloat16)
    k = torch.randn(b, hkv, s, d, generator=g, device=device).to(torch.bfloat16)
    v = torch.randn(b, hkv, s, d, generator=g, device=device).to(torch.bfloat16)
    num, idx = random_blocks(b, hkv, s // blk, s // blk, params["density"], g, device)
    return {"q": q, "k": k, "v": v, "kv_num_blocks": num, "kv_indices": idx}


def empty_output(params: dict, device: str) -> torch.Tensor:
    """Uninitialised (B,Hq,S,D) bf16 output."""
    return torch.empty(params["b"], params["hq"], params["s"], params["d"], device=device,
                       dtype=torch.bfloat16)


def _block(q, kv_indices) -> int:
    return q.shape[2] // kv_indices.shape[2]


def reference(q, k, v, kv_num_blocks, kv_indices) -> torch.Tensor:
    """fp64 causal attention over the selected blocks only: (B,Hq,S,D) float64."""
    return masked_attention(q, k, v, kv_num_blocks, kv_indices, _block(q, kv_indices), "fp64")


def lowp_bf16(q, k, v, kv_num_blocks, kv_indices) -> torch.Tensor:
    """Same math with fp32 scores, bf16-rounded probabilities and bf16 output."""
    return masked_attention(q, k, v, kv_num_blocks, kv_indices, _block(q, kv_indices), "bf16")
