"""A Llama-3.2-1B-shaped decoder, batch 1, one decode step: inputs, the fp32 oracle, the bf16 eager run.

Weights are random (bf16), stacked per layer and merged the way serving stacks load them:
wqkv (L, (Hq+2Hkv)D, hidden) with q rows, then k, then v; wgu (L, 2I, hidden), gate rows then up;
the LM head is the tied embedding. The step embeds `token`, runs every layer at position `pos`
(writing its new K/V into cache slot pos, attending to slots 0..pos), and returns fp32 logits (V,).
RoPE is NeoX/Llama split-half with theta 500000 (Llama 3's frequency rescaling left out)."""
from __future__ import annotations

import math

import torch

from suite.lib.llama import EPS, LLAMA_1B, THETA


def make_inputs(params: dict, seed: int, device: str) -> dict[str, torch.Tensor]:
    """bf16 weights ~ N(0, 1/fan_in), norm gains ~ 1 + N(0, 0.1^2), caches ~ N(0,1) (L,Hkv,S,D) with
    S = params["kv"] slots, the step at the last slot (pos = S-1); token and pos int64 (1,) tensors."""
    p = {**LLAMA_1B, **params}
    g = torch.Generator(device=device).manual_seed(seed)
    L, H, D, I, V = p["layers"], p["hidden"], p["head_dim"], p["inter"], p["vocab"]
    hq, hkv, S = p["heads"], p["kv_heads"], p["kv"]

    def w(*shape, scale):
        return (scale * torch.randn(*shape, generator=g, device=device)).to(torch.bfloat16)

    def gain(*shape):
        return (1 + 0.1 * torch.randn(*shape, generator=g, device=device)).to(torch.bfloat16)

    return {
        "emb": w(V, H, scale=1.0),
        "wqkv": w(L, (hq + 2 * hkv) * D, H, scale=H ** -0.5),
        "wo": w(L, H, hq * D, scale=(hq * D) ** -0.5),
        "wgu": w(L, 2 * I, H, scale=H ** -0.5),
        "wd": w(L, H, I, scale=I ** -0.5),
        "ln1": gain(L, H), "ln2": gain(L, H), "lnf": gain(H),
        "k_cache": w(L, hkv, S, D, scale=1.0), "v_cache": w(L, hkv, S, D, scale=1.0),
        "token": torch.randint(0, V, (1,), generator=g, device=device),
        "pos": torch.full((1,), S - 1, dtype=torch.int64, device=device),
    }


def empty_output(params: dict, device: str) -> torch.Tensor:
    """Uninitialised fp32 logits (V,)."""
    return torch.empty({**LLAMA_1B, **params}["vocab"], device=device, dtype=torch.float32)


def weight_bytes(p: dict) -> float:
    """Bytes of every weight one step reads: the layers, the norms and the tied head (V x hidden)."""
    p = {**LLAMA_1B, **p}
    H, D, I = p["hidden"], p["head_dim"], p["inter"]
    per_layer = H * (p["heads"] + 2 * p["kv_heads"]) * D + p["heads"] * D * H + 3 * H * I + 2 * H
    return 2.0 * (p["layers"] * per_layer + p["vocab"] * H + H)


def kv_bytes(p: dict) -> float:
    """Bytes of the K and V caches one step reads (every slot once, bf16)."""
    p = {**LLAMA_1B, **p}
    return 2.0 * 2 * p["layers"] * p["kv_heads"] * p["kv"] * p["head_dim"]


def rms_norm(x: torch.Tensor, gain: torch.Tensor) -> torch.Tensor:
    """x (1,H) normalised in fp32 and cast back to x's dtype, times gain (HF Llama's order)."""
    xf = x.float()
    y = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + EPS)
    return gain.to(x.dtype) * y.to(x.dtype)


def rope(x: torch.Tensor, pos: torch.Tensor) -> torch.Tensor:
    """Split-half rotary embedding of x (heads, D) at position pos (1,) int64."""
    d = x.shape[-1]
    inv = THETA ** (-torch.arange(0, d, 2, device=x.device, dtype=torch.float64) / d)
    ang = pos.to(torch.float64) * inv
    cos, sin = ang.cos().to(x.dtype), ang.sin().to(x.dtype)
    x1, x2 = x[..., : d // 2], x[..., d // 2:]
    return torch.cat((x1 * cos - x2 * sin, x2 * cos + x1 * sin), -1)


def layer(h, wqkv, wo, wgu, wd, ln1, ln2, kc, vc, pos, dt):
    """One decoder layer on h (1,H) in dtype dt with one layer's weights; writes K/V into slot pos
    of its caches kc, vc (Hkv,S,D)."""
    hkv, S, D = kc.shape
    hq = wo.shape[-1] // D
    qkv = rms_norm(h, ln1) @ wqkv.to(dt).t()
    q = rope(qkv[0, : hq * D].view(hq, D), pos)
    k = rope(qkv[0, hq * D: (hq + hkv) * D].view(hkv, D), pos)
    v = qkv[0, (hq + hkv) * D:].view(hkv, D)
    kc.index_copy_(1, pos, k.to(kc.dtype)[:, None])
    vc.index_copy_(1, pos, v.to(vc.dtype)[:, None])
    s = (q.view(hkv, hq // hkv, D) @ kc.to(dt).transpose(1, 2)).float() / math.sqrt(D)  # (Hkv, G, S)
    s = s.masked_fill(torch.arange(S, device=h.device) > pos, float("-inf"))
    o = (torch.softmax(s, -1).to(dt) @ vc.to(dt)).reshape(1, hq * D)
    h = h + o @ wo.to(dt).t()
    gate, up = (rms_norm(h, ln2) @ wgu.to(dt).t()).chunk(2, -1)
    return h + (torch.nn.functional.silu(gate) * up) @ wd.to(dt).t()


def forward(dt, emb, wqkv, wo, wgu, wd, ln1, ln2, lnf, k_cache, v_cache, token, pos, layer_fn=layer):
    """Logits (1,V) in dtype dt of one step; weights cast to dt layer by layer."""
    h = emb.index_select(0, token).to(dt)
    for l in range(wqkv.shape[0]):
        h = layer_fn(h, wqkv[l], wo[l], wgu[l], wd[l], ln1[l], ln2[l], k_cache[l], v_cache[l], pos, dt)
    return rms_norm(h, lnf) @ emb.to(dt).t()


def reference(**inputs) -> torch.Tensor:
    """The oracle: the eager model in fp32 (fp32 caches), logits (V,) fp32."""
    inputs = {**inputs, "k_cache": inputs["k_cache"].float(), "v_cache": inputs["v_cache"].float()}
    return forward(torch.float32, **inputs)[0]


def lowp_eager(**inputs) -> torch.Tensor:
    """The plain bf16 eager step (the tolerance's yardstick): logits (V,) bf16."""
    return forward(torch.bfloat16, **inputs)[0]
