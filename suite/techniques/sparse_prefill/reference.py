"""Oracle and inputs for the selector + kernel pipeline: fp64 attention over msa_index's blocks."""
from __future__ import annotations

import torch

from suite.lib.block_sparse import masked_attention
from suite.lib.selectors import msa_index


def make_inputs(params: dict, seed: int, device: str) -> dict:
    """q (B,Hq,S,D), k/v (B,Hkv,S,D) bf16 normal, plus block and density."""
    g = torch.Generator(device=device).manual_seed(seed)
    b, hq, hkv, s, d = (params[x] for x in ("b", "hq", "hkv", "s", "d"))
    q, k, v = (torch.randn(b, h, s, d, generator=g, device=device).to(torch.bfloat16)
               for h in (hq, hkv, hkv))
    return {"q": q, "k": k, "v": v, "block": params["block"], "density": params["density"]}


def empty_output(params: dict, device: str) -> torch.Tensor:
    """Uninitialised (B,Hq,S,D) bf16 output."""
    return torch.empty(params["b"], params["hq"], params["s"], params["d"], device=device,
                       dtype=torch.bfloat16)


def reference(q, k, v, block: int, density: float) -> torch.Tensor:
    """fp64 causal attention over the blocks the torch msa_index selector keeps: (B,Hq,S,D)."""
    return masked_attention(q, k, v, *msa_index(q, k, block, density), block, "fp64")


def lowp_bf16(q, k, v, block: int, density: float) -> torch.Tensor:
    """The same with fp32 scores, bf16-rounded probabilities and bf16 output."""
    return masked_attention(q, k, v, *msa_index(q, k, block, density), block, "bf16")
