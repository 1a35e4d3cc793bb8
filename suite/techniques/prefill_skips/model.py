"""A Llama-shaped decoder stack for prefill, batch 1, returning the last position's logits, in four modes:
full; the last layer's FFN for the last position only (skip_last_ffn); the whole last layer after its
K/V projection for the last position only (skip_last_layer); layer 0's Q/K/V looked up per token id from a
table built once (layer0_table: layer 0 reads embeddings, so RMSNorm(emb) @ W_qkv is a function of the id)."""
from __future__ import annotations

import torch
import torch.nn.functional as F

from suite.lib import rope

MODES = ("full", "skip_last_ffn", "skip_last_layer", "layer0_table")


def rmsnorm(x: torch.Tensor, w: torch.Tensor, eps: float) -> torch.Tensor:
    """x (T,H) normalised in fp32, times w, in x's dtype."""
    xf = x.float()
    return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps) * w.float()).to(x.dtype)


def _attention(qkv: torch.Tensor, wo: torch.Tensor, cos, sin, p: dict, last_only: bool) -> torch.Tensor:
    """qkv (T, (Hq + 2 Hkv) D) -> attention output (T or 1, H) after the output projection; causal."""
    t, d, hq, hkv = qkv.shape[0], p["head_dim"], p["heads"], p["kv_heads"]
    q, k, v = qkv.view(t, hq + 2 * hkv, d).split((hq, hkv, hkv), dim=1)
    if last_only:
        q, cq, sq = q[-1:], cos[-1:], sin[-1:]
    else:
        cq, sq = cos, sin
    qr, kr = torch.empty_like(q), torch.empty_like(k)
    rope.rotate_into(qr, q, cq, sq, "neox")
    rope.rotate_into(kr, k, cos, sin, "neox")
    # K/V heads repeated for the query groups (enable_gqa would send fp32 to the T x T math backend);
    # the last query sees every key: no mask needed when it is the only query
    kr, v = (z.repeat_interleave(hq // hkv, dim=1) for z in (kr, v))
    o = F.scaled_dot_product_attention(qr.transpose(0, 1)[None], kr.transpose(0, 1)[None],
                                       v.transpose(0, 1)[None], is_causal=not last_only)
    return o[0].transpose(0, 1).reshape(q.shape[0], hq * d) @ wo.t()


def _ffn(h: torch.Tensor, wgu: torch.Tensor, wd: torch.Tensor) -> torch.Tensor:
    g, u = (h @ wgu.t()).chunk(2, dim=-1)
    return (F.silu(g) * u) @ wd.t()


def qkv0_table(emb, ln1, wqkv, eps: float) -> torch.Tensor:
    """(V, (Hq + 2 Hkv) D): layer 0's Q/K/V projection of every token's embedding (before RoPE)."""
    return rmsnorm(emb, ln1[0], eps) @ wqkv[0].t()


def forward(ids, emb, wqkv, wo, wgu, wd, ln1, ln2, lnf, cos, sin, p: dict, mode: str = "full",
            table: torch.Tensor | None = None) -> torch.Tensor:
    """Logits (1, V) of the last position of ids (T,); weights stacked per layer (L, out, in), tied head."""
    eps, n = p["eps"], p["layers"]
    x = emb[ids]
    for i in range(n):
        last = i == n - 1
        qkv = table[ids] if (i == 0 and mode == "layer0_table") else rmsnorm(x, ln1[i], eps) @ wqkv[i].t()
        trim = last and mode == "skip_last_layer"
        x = (x[-1:] if trim else x) + _attention(qkv, wo[i], cos, sin, p, last_only=trim)
        if last and mode == "skip_last_ffn":
            x = x[-1:]
        x = x + _ffn(rmsnorm(x, ln2[i], eps), wgu[i], wd[i])
    return rmsnorm(x[-1:], lnf, eps) @ emb.t()


def run(out, mode: str = "full", **inputs) -> None:
    """out (V,) fp32 = the last position's logits, computed in `mode` (see the module docstring)."""
    table = inputs.pop("qkv0_table")
    out.copy_(forward(**inputs, mode=mode, table=table)[0])
