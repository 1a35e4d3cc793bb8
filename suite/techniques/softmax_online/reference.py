"""Oracle and inputs for attention forward with online softmax: fp64 softmax(q k^T / sqrt(d)) v."""
from __future__ import annotations

import math

import torch

from suite.lib.exp2 import exp2_variant_torch


def make_inputs(params: dict, seed: int, device: str) -> dict:
    """q, k, v (B,H,S,D) bf16 standard normal, and the `causal` flag."""
    g = torch.Generator(device=device).manual_seed(seed)
    shape = (params["b"], params["h"], params["s"], params["d"])
    mk = lambda: torch.randn(shape, generator=g, device=device).to(torch.bfloat16)
    return {"q": mk(), "k": mk(), "v": mk(), "causal": params["causal"]}


def empty_output(params: dict, device: str) -> torch.Tensor:
    """Uninitialised (B,H,S,D) bf16."""
    return torch.empty(params["b"], params["h"], params["s"], params["d"], device=device,
                       dtype=torch.bfloat16)


def _per_head(q, k, v, causal: bool, head_fn) -> torch.Tensor:
    b, h, s, d = q.shape
    out = torch.empty(b, h, s, d, dtype=torch.float64, device=q.device)
    mask = torch.ones(s, s, dtype=torch.bool, device=q.device).tril() if causal else None
    for i in range(b):
        for j in range(h):
            out[i, j] = head_fn(q[i, j], k[i, j], v[i, j], mask, 1.0 / math.sqrt(d))
    return out


def reference(q, k, v, causal: bool) -> torch.Tensor:
    """fp64 attention (B,H,S,D) float64, causal or not."""
    def head(q, k, v, mask, scale):
        s = (q.double() @ k.double().T) * scale
        if mask is not None:
            s = s.masked_fill(~mask, float("-inf"))
        return torch.softmax(s, -1) @ v.double()
    return _per_head(q, k, v, causal, head)


def _lowp(q, k, v, causal: bool, degree: int) -> torch.Tensor:
    def head(q, k, v, mask, scale):
        s = (q.float() @ k.float().T) * (scale * 1.4426950408889634)
        if mask is not None:
            s = s.masked_fill(~mask, float("-inf"))
        p = exp2_variant_torch(s - s.amax(-1, keepdim=True), degree)
        o = (p.to(torch.bfloat16).float() @ v.float()) / p.sum(-1, keepdim=True)
        return o.to(torch.bfloat16).double()
    return _per_head(q, k, v, causal, head).to(torch.bfloat16)


def lowp_bf16(q, k, v, causal: bool) -> torch.Tensor:
    """fp32 scores and exp2, bf16-rounded probabilities into P V, bf16 output (B,H,S,D)."""
    return _lowp(q, k, v, causal, 0)


def lowp_bf16_poly3(q, k, v, causal: bool) -> torch.Tensor:
    """As lowp_bf16 with the degree-3 polynomial exp2 (B,H,S,D) bf16."""
    return _lowp(q, k, v, causal, 3)
