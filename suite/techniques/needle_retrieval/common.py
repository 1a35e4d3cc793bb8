"""The needle probe: a seeded haystack, one needle key aligned to the question, and its scoring."""
from __future__ import annotations

import math

import torch


def haystack(ctx: int, depth: float | None, strength: float, block: int, hq: int, hkv: int, d: int,
             seed: int, device: str) -> dict:
    """Keys/values (1,Hkv,ctx,D) bf16 ~ N(0,1); the question is the last block of queries
    (1,Hq,block,D): one direction q* (|q*| = sqrt(D)) plus N(0, 0.3^2) noise per query.
    The needle key at position round(depth * (ctx - block - 1)) is q*/|q*| * (ln ctx + strength),
    (depth None: inside the question block, which every selection keeps), so its logit exceeds a haystack key's N(0,1) by ln(ctx) + strength: weight ~ e^s/(e^s+e^0.5)."""
    g = torch.Generator(device=device).manual_seed(seed)
    k = torch.randn(1, hkv, ctx, d, generator=g, device=device)
    v = torch.randn(1, hkv, ctx, d, generator=g, device=device)
    qdir = torch.nn.functional.normalize(torch.randn(d, generator=g, device=device), dim=0)
    q = math.sqrt(d) * qdir + 0.3 * torch.randn(1, hq, block, d, generator=g, device=device)
    pos = ctx - block if depth is None else round(depth * (ctx - block - 1))
    k[:, :, pos] = qdir * (math.log(ctx) + strength)
    return {"q": q.to(torch.bfloat16), "k": k.to(torch.bfloat16), "v": v.to(torch.bfloat16),
            "needle": pos}


def dense_question(q, k, v, mode: str = "fp64") -> torch.Tensor:
    """Causal attention of the last-block queries q (1,Hq,Bq,D) over all of k, v (1,Hkv,S,D):
    (1,Hq,Bq,D) float64 ("fp64"), float32 ("fp32"), or bf16 with bf16-rounded probabilities ("bf16")."""
    hq, bq, d = q.shape[1], q.shape[2], q.shape[3]
    hkv, s = k.shape[1], k.shape[2]
    cdt = torch.float64 if mode == "fp64" else torch.float32
    qc = q.to(cdt).view(1, hkv, hq // hkv, bq, d)
    sc = torch.einsum("bhgqd,bhkd->bhgqk", qc, k.to(cdt)) / math.sqrt(d)
    qpos = torch.arange(s - bq, s, device=q.device)
    sc = sc.masked_fill(torch.arange(s, device=q.device)[None, :] > qpos[:, None], float("-inf"))
    p = torch.softmax(sc, dim=-1)
    if mode == "bf16":
        p = p.to(torch.bfloat16).float()
    o = torch.einsum("bhgqk,bhkd->bhgqd", p, v.to(cdt)).reshape(1, hq, bq, d)
    return o.to(torch.bfloat16) if mode == "bf16" else o


def score_cell(out: torch.Tensor, dense: torch.Tensor, v: torch.Tensor, needle: int,
               needle_selected: bool) -> dict:
    """recall (needle's block selected), fidelity_cos (mean cosine sparse vs dense output over the
    question's queries and heads) and retrieval (the mean sparse output's nearest value by cosine
    is the needle's)."""
    o, dn = out.float(), dense.float()
    fid = torch.nn.functional.cosine_similarity(o, dn, dim=-1).mean().item()
    hkv = v.shape[1]
    om = o.view(1, hkv, -1, o.shape[-1]).mean(2)  # (1,Hkv,D): the group's answer
    cos = torch.nn.functional.cosine_similarity(om[:, :, None, :], v.float(), dim=-1)
    hit = bool((cos.argmax(-1) == needle).all())
    return {"recall": float(needle_selected), "fidelity_cos": fid, "retrieval": float(hit)}
