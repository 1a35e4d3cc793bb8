"""Shared math for dense causal GQA attention: chunked oracle, SDPA backend call, flex cache."""
from __future__ import annotations

import math

import torch

_GQA_NATIVE: dict[str, bool] = {}


def chunked_causal(q, k, v, mode: str = "fp64", chunk: int = 256) -> torch.Tensor:
    """Causal GQA attention, q (B,Hq,S,D), k/v (B,Hkv,S,D) -> (B,Hq,S,D) float64 ("fp64"),
    or bf16 with fp32 scores and bf16-rounded probabilities ("bf16"); chunked over queries."""
    bsz, hq, s, d = q.shape
    hkv = k.shape[1]
    grp = hq // hkv
    cdt = torch.float64 if mode == "fp64" else torch.float32
    kc, vc = k.to(cdt), v.to(cdt)
    out = torch.empty(bsz, hq, s, d, device=q.device,
                      dtype=torch.float64 if mode == "fp64" else torch.bfloat16)
    scale = 1.0 / math.sqrt(d)
    for a in range(0, s, chunk):
        e = min(a + chunk, s)
        qc = q[:, :, a:e].to(cdt).reshape(bsz, hkv, grp, e - a, d)
        sc = torch.einsum("bhgqd,bhkd->bhgqk", qc, kc[:, :, :e]) * scale
        causal = torch.arange(e, device=q.device)[None, :] <= torch.arange(a, e, device=q.device)[:, None]
        p = torch.softmax(sc.masked_fill(~causal, float("-inf")), dim=-1)
        if mode != "fp64":
            p = p.to(torch.bfloat16).float()
        o = torch.einsum("bhgqk,bhkd->bhgqd", p, vc[:, :, :e])
        out[:, :, a:e] = o.reshape(bsz, hq, e - a, d).to(out.dtype)
    return out


def sdpa(q, k, v, backend_name: str) -> torch.Tensor:
    """F.scaled_dot_product_attention(causal) on one SDPA backend; GQA natively where the backend
    takes enable_gqa, else with K/V expanded to the query heads (inside the timed call)."""
    from torch.nn.attention import SDPBackend, sdpa_kernel

    backend = getattr(SDPBackend, backend_name)
    with sdpa_kernel(backend):
        if _GQA_NATIVE.get(backend_name, True):
            try:
                o = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True,
                                                                     enable_gqa=True)
                _GQA_NATIVE[backend_name] = True
                return o
            except RuntimeError:
                _GQA_NATIVE[backend_name] = False
        grp = q.shape[1] // k.shape[1]
        return torch.nn.functional.scaled_dot_product_attention(
            q, k.repeat_interleave(grp, 1), v.repeat_interleave(grp, 1), is_causal=True)


def gqa_native(backend_name: str) -> bool | None:
    """Whether the last call on this backend took enable_gqa natively (None: not called yet)."""
    return _GQA_NATIVE.get(backend_name)
