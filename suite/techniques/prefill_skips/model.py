"""A Llama-shaped decoder stack for prefill, batch 1, returning the last position's logits, in four modes:
full; the last layer's FFN for the last position only (skip_last_ffn); the whole last layer after its
K/V projection for the last position only (skip_last_layer); layer 0's Q/K/V looked up per token id from a
table built once (layer0_table: layer 0 reads embeddings, so RMSNorm(emb) @ W_qkv is a function of the id);
layer 0 over a fixed prefix computed once (prefix_layer0: its output rows and rotated K/V stored, layer 0 run
for the positions after the prefix only, attending to the stored K/V; layers 1.. over every position)."""
from __future__ import annotations

import torch
import torch.nn.functional as F

from torch.nn.attention.bias import causal_lower_right

from suite.lib import rope

MODES = ("full", "skip_last_ffn", "skip_last_layer", "layer0_table", "prefix_layer0")


def rmsnorm(x: torch.Tensor, w: torch.Tensor, eps: float) -> torch.Tensor:
    """x (T,H) normalised in fp32, times w, in x's dtype."""
    xf = x.float()
    return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps) * w.float()).to(x.dtype)


def _attention(qkv: torch.Tensor, wo: torch.Tensor, cos, sin, p: dict, last_only: bool, prefix=None,
               want_kv: bool = False):
    """qkv (T, (Hq + 2 Hkv) D) of positions P.. -> attention output (T or 1, H) after the output projection;
    causal. prefix: {"k", "v"} (P, Hkv, D) rotated K and V of positions 0..P-1 (P = 0 without); want_kv:
    also return this call's rotated K and its V."""
    t, d, hq, hkv = qkv.shape[0], p["head_dim"], p["heads"], p["kv_heads"]
    n0 = 0 if prefix is None else prefix["k"].shape[0]
    cos, sin = cos[n0:n0 + t], sin[n0:n0 + t]
    q, k, v = qkv.view(t, hq + 2 * hkv, d).split((hq, hkv, hkv), dim=1)
    if last_only:
        q, cq, sq = q[-1:], cos[-1:], sin[-1:]
    else:
        cq, sq = cos, sin
    qr, kr = torch.empty_like(q), torch.empty_like(k)
    rope.rotate_into(qr, q, cq, sq, "neox")
    rope.rotate_into(kr, k, cos, sin, "neox")
    ka, va = (kr, v) if prefix is None else (torch.cat((prefix["k"], kr)), torch.cat((prefix["v"], v)))
    # K/V heads repeated for the query groups (enable_gqa would send fp32 to the T x T math backend);
    # the last query sees every key: no mask needed when it is the only query; after a prefix the
    # causal mask is aligned to the last key (query i sees keys 0..P+i)
    ka, va = (z.repeat_interleave(hq // hkv, dim=1) for z in (ka, va))
    mask = None if prefix is None or last_only else causal_lower_right(q.shape[0], ka.shape[0])
    o = F.scaled_dot_product_attention(qr.transpose(0, 1)[None], ka.transpose(0, 1)[None],
                                       va.transpose(0, 1)[None], attn_mask=mask,
                                       is_causal=prefix is None and not last_only)
    out = o[0].transpose(0, 1).reshape(q.shape[0], hq * d) @ wo.t()
    return (out, kr, v) if want_kv else out


def _ffn(h: torch.Tensor, wgu: torch.Tensor, wd: torch.Tensor) -> torch.Tensor:
    g, u = (h @ wgu.t()).chunk(2, dim=-1)
    return (F.silu(g) * u) @ wd.t()


def qkv0_table(emb, ln1, wqkv, eps: float) -> torch.Tensor:
    """(V, (Hq + 2 Hkv) D): layer 0's Q/K/V projection of every token's embedding (before RoPE)."""
    return rmsnorm(emb, ln1[0], eps) @ wqkv[0].t()


def prefix_layer0(ids, emb, wqkv, wo, wgu, wd, ln1, ln2, cos, sin, p: dict) -> dict:
    """Layer 0 over a fixed prefix ids (P,), computed once: {"h": its output rows (P, H), "k", "v": its
    rotated K and its V (P, Hkv, D)} (positions 0..P-1 attend only to the prefix: causal)."""
    x = emb[ids]
    o, k, v = _attention(rmsnorm(x, ln1[0], p["eps"]) @ wqkv[0].t(), wo[0], cos, sin, p, False, want_kv=True)
    x = x + o
    return {"h": x + _ffn(rmsnorm(x, ln2[0], p["eps"]), wgu[0], wd[0]), "k": k, "v": v}


def forward(ids, emb, wqkv, wo, wgu, wd, ln1, ln2, lnf, cos, sin, p: dict, mode: str = "full",
            table: torch.Tensor | None = None, prefix: dict | None = None) -> torch.Tensor:
    """Logits (1, V) of the last position of ids (T,); weights stacked per layer (L, out, in), tied head;
    prefix: prefix_layer0's result for ids[:P] (mode prefix_layer0)."""
    eps, n = p["eps"], p["layers"]
    pre = prefix if mode == "prefix_layer0" else None
    x = emb[ids if pre is None else ids[pre["h"].shape[0]:]]
    for i in range(n):
        last = i == n - 1
        qkv = table[ids] if (i == 0 and mode == "layer0_table") else rmsnorm(x, ln1[i], eps) @ wqkv[i].t()
        trim = last and mode == "skip_last_layer"
        x = (x[-1:] if trim else x) + _attention(qkv, wo[i], cos, sin, p, last_only=trim,
                                                 prefix=pre if i == 0 else None)
        if last and mode == "skip_last_ffn":
            x = x[-1:]
        x = x + _ffn(rmsnorm(x, ln2[i], eps), wgu[i], wd[i])
        if i == 0 and pre is not None:
            x = torch.cat((pre["h"], x))
    return rmsnorm(x[-1:], lnf, eps) @ emb.t()


def run(out, mode: str = "full", **inputs) -> None:
    """out (V,) fp32 = the last position's logits, computed in `mode` (see the module docstring)."""
    table, prefix = inputs.pop("qkv0_table"), inputs.pop("prefix0")
    out.copy_(forward(**inputs, mode=mode, table=table, prefix=prefix)[0])
