"""Oracle and inputs for block selectors: the exact top-k mask on topic-structured q, k."""
from __future__ import annotations

import math

import torch

from suite.lib.block_sparse import dense_block_mask, random_blocks
from suite.lib.selectors import exact_topk


def make_inputs(params: dict, seed: int, device: str) -> dict[str, torch.Tensor]:
    """q (B,Hq,S,D), k (B,Hkv,S,D) bf16 (plus block, density): normal noise plus a topic direction per block (one of
    params["topics"]), scaled so a matching topic adds ~params["signal"] to a logit."""
    g = torch.Generator(device=device).manual_seed(seed)
    b, hq, hkv, s, d, blk = (params[x] for x in ("b", "hq", "hkv", "s", "d", "block"))
    n_top, nb = params.get("topics", 16), s // blk
    topics = torch.nn.functional.normalize(torch.randn(n_top, d, generator=g, device=device), dim=-1)
    amp = math.sqrt(params.get("signal", 2.0)) * d ** 0.25  # amp^2/sqrt(d) = signal
    def side(h):
        t = torch.randint(0, n_top, (b, h, nb), generator=g, device=device)
        x = torch.randn(b, h, s, d, generator=g, device=device)
        return (x + amp * topics[t].repeat_interleave(blk, dim=2)).to(torch.bfloat16)
    return {"q": side(hq), "k": side(hkv), "block": blk, "density": params["density"]}


def empty_output(params: dict, device: str) -> torch.Tensor:
    """Uninitialised (B,Hkv,nQB,nKB) fp32 block mask (1 = selected)."""
    nb = params["s"] // params["block"]
    return torch.empty(params["b"], params["hkv"], nb, nb, device=device, dtype=torch.float32)




def reference(q, k, block: int, density: float) -> torch.Tensor:
    """Exact top-k selection by true attention mass (fp32 scores), as a float64 0/1 mask."""
    return dense_block_mask(*exact_topk(q, k, block, density)).double()


def lowp_chance(q, k, block: int, density: float) -> torch.Tensor:
    """Chance: a seeded random selection with the same budget (a selector must beat it)."""
    g = torch.Generator(device=q.device).manual_seed(1234)
    nb = k.shape[2] // block
    return dense_block_mask(*random_blocks(q.shape[0], k.shape[1], nb, nb, density, g, q.device)).double()
