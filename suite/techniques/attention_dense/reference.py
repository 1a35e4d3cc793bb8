"""Oracle and inputs for dense causal GQA attention."""
from __future__ import annotations

import torch

from suite.techniques.attention_dense.common import chunked_causal


def make_inputs(params: dict, seed: int, device: str) -> dict[str, torch.Tensor]:
    """q (B,Hq,S,D), k/v (B,Hkv,S,D), bf16 standard normal."""
    g = torch.Generator(device=device).manual_seed(seed)
    b, hq, hkv, s, d = (params[x] for x in ("b", "hq", "hkv", "s", "d"))
    mk = lambda h: torch.randn(b, h, s, d, generator=g, device=device).to(torch.bfloat16)
    return {"q": mk(hq), "k": mk(hkv), "v": mk(hkv)}


def empty_output(params: dict, device: str) -> torch.Tensor:
    """Uninitialised (B,Hq,S,D) bf16."""
    return torch.empty(params["b"], params["hq"], params["s"], params["d"], device=device,
                       dtype=torch.bfloat16)


def reference(q, k, v) -> torch.Tensor:
    """fp64 causal GQA attention (B,Hq,S,D) float64."""
    return chunked_causal(q, k, v, "fp64")


def lowp_bf16(q, k, v) -> torch.Tensor:
    """fp32 scores, bf16-rounded probabilities, bf16 output: a plain bf16 flash-style run."""
    return chunked_causal(q, k, v, "bf16")
