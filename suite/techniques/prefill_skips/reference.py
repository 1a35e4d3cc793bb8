"""Inputs and the fp32 oracle of the prefill stack (model.py): random bf16 weights, a random prompt."""
from __future__ import annotations

import torch

from suite.lib import rope
from suite.techniques.prefill_skips import model

THETA = 500000.0


def make_inputs(params: dict, seed: int, device: str) -> dict:
    """Weights ~ N(0, 1/fan_in) bf16 stacked per layer, norm gains ~ 1 + N(0, 0.1^2), token ids (T,),
    RoPE cos/sin (T, D/2) fp32 from fp64 angles, layer 0's Q/K/V table (V, N) bf16 built once, and
    layer 0 over the first params["prefix"] ids (a fixed prefix) built once (model.prefix_layer0)."""
    p = params
    g = torch.Generator(device=device).manual_seed(seed)
    n, h, d, i, v = p["layers"], p["hidden"], p["head_dim"], p["inter"], p["vocab"]
    nqkv = (p["heads"] + 2 * p["kv_heads"]) * d

    def w(*shape, scale):
        return (scale * torch.randn(*shape, generator=g, device=device)).to(torch.bfloat16)

    def gain(*shape):
        return (1 + 0.1 * torch.randn(*shape, generator=g, device=device)).to(torch.bfloat16)

    cos, sin = rope.tables(p["tokens"], d, THETA, device)
    inputs = {"ids": torch.randint(0, v, (p["tokens"],), generator=g, device=device),
              "emb": w(v, h, scale=1.0), "wqkv": w(n, nqkv, h, scale=h ** -0.5),
              "wo": w(n, h, p["heads"] * d, scale=(p["heads"] * d) ** -0.5),
              "wgu": w(n, 2 * i, h, scale=h ** -0.5), "wd": w(n, h, i, scale=i ** -0.5),
              "ln1": gain(n, h), "ln2": gain(n, h), "lnf": gain(h),
              "cos": cos.float(), "sin": sin.float(), "p": {**p, "eps": 1e-5}}
    inputs["qkv0_table"] = model.qkv0_table(inputs["emb"], inputs["ln1"], inputs["wqkv"], 1e-5)
    weights = {k: inputs[k] for k in ("emb", "wqkv", "wo", "wgu", "wd", "ln1", "ln2", "cos", "sin", "p")}
    inputs["prefix0"] = model.prefix_layer0(inputs["ids"][:p.get("prefix", 1)], **weights)
    return inputs


def empty_output(params: dict, device: str) -> torch.Tensor:
    return torch.empty(params["vocab"], device=device, dtype=torch.float32)


def _weights32(inputs: dict) -> dict:
    return {k: (v.float() if isinstance(v, torch.Tensor) and v.is_floating_point() else v)
            for k, v in inputs.items() if k not in ("qkv0_table", "prefix0")}


def reference(**inputs) -> torch.Tensor:
    """fp32 eager full prefill (weights upcast), last position's logits as (V,) float64."""
    return model.forward(**_weights32(inputs))[0].double()


def lowp(**inputs) -> torch.Tensor:
    """The bf16 full prefill: the error class every mode is judged in."""
    inputs = dict(inputs)
    inputs.pop("qkv0_table")
    inputs.pop("prefix0")
    return model.forward(**inputs)[0].float()


def flops(p: dict, mode: str = "full") -> float:
    """Multiply-add FLOPs x 2 of one prefill in `mode` (matmuls and attention; norms, RoPE aside)."""
    t, h, d, hq, hkv, i, n = (p["tokens"], p["hidden"], p["head_dim"], p["heads"], p["kv_heads"], p["inter"],
                              p["layers"])
    qkv, o, ffn = 2 * h * (hq + 2 * hkv) * d, 2 * hq * d * h, 6 * h * i
    attn = 4 * hq * d * t * (t + 1) / 2  # causal: query j sees j + 1 keys
    total = n * (t * (qkv + o + ffn) + attn) + 2 * h * p["vocab"]
    if mode == "skip_last_ffn":
        total -= (t - 1) * ffn
    elif mode == "skip_last_layer":
        total -= (t - 1) * (2 * h * hq * d + o + ffn) + 4 * hq * d * (t * (t + 1) / 2 - t)
    elif mode == "layer0_table":
        total -= t * qkv
    elif mode == "prefix_layer0":  # layer 0's rows of the prefix: projections, FFN, their causal attention
        pre = p.get("prefix", 1)
        total -= pre * (qkv + o + ffn) + 4 * hq * d * pre * (pre + 1) / 2
    return total
