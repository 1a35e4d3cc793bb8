"""Oracles and inputs for RoPE: standalone on (T,H,D) query/key heads, and fused into the QKV
projection. Angles m * base^(-2i/r) in fp64 for the oracle; tables built in fp64 and cast once."""
from __future__ import annotations

import math

import torch

from suite.lib import rope

BASE = 10000.0


def _tables(max_pos: int, rot: int, device: str) -> dict:
    cos, sin = rope.tables(max_pos, rot, BASE, device)
    c32, s32 = cos.float(), sin.float()
    return {"cos32": c32, "sin32": s32, "cos16": c32.bfloat16(), "sin16": s32.bfloat16(),
            "inv_freq": rope.inv_freq(rot, BASE, torch.float32, device)}


def tables(max_pos: int, rot: int, device: str) -> dict:
    """cos32, sin32 (max_pos, rot/2) fp32 from fp64 angles; cos16, sin16 the same cast to bf16; inv_freq fp32."""
    return _tables(max_pos, rot, device)


def inputs_at(params: dict, seed: int, device: str, pos: torch.Tensor, tabs: dict) -> dict:
    """x (T,H,D) bf16 ~ N(0,1) at positions pos (T,) int32, with the tables `tabs` (see tables())."""
    g = torch.Generator(device=device).manual_seed(seed)
    x = torch.randn(pos.numel(), params["heads"], params["head_dim"], generator=g, device=device)
    return {"x": x.to(torch.bfloat16), "pos": pos.to(device=device, dtype=torch.int32), **tabs,
            "layout": params["layout"], "rot": params["rot"]}


def make_inputs(params: dict, seed: int, device: str) -> dict:
    """T tokens at positions drawn uniformly from [0, max_pos)."""
    g = torch.Generator(device="cpu").manual_seed(seed)
    pos = torch.randint(0, params["max_pos"], (params["tokens"],), generator=g)
    return inputs_at(params, seed, device, pos, _tables(params["max_pos"], params["rot"], device))


def empty_output(params: dict, device: str) -> torch.Tensor:
    return torch.empty(params["tokens"], params["heads"], params["head_dim"], device=device, dtype=torch.bfloat16)


def _angles64(pos: torch.Tensor, rot: int) -> torch.Tensor:
    return pos.double()[:, None] * rope.inv_freq(rot, BASE, device=pos.device)


def reference(x, pos, layout, rot, **tables) -> torch.Tensor:
    """fp64 rotation with fp64 angles, (T,H,D) float64."""
    ang = _angles64(pos, rot)
    out = torch.empty(x.shape, dtype=torch.float64, device=x.device)
    rope.rotate_into(out, x.double(), ang.cos(), ang.sin(), layout)
    return out


def lowp(x, pos, layout, rot, cos32, sin32, **_) -> torch.Tensor:
    """fp32 table rows (fp64 angles, cast once), rotation in fp32, rounded to bf16 once."""
    out = torch.empty_like(x)
    p = pos.long()
    rope.rotate_into(out, x, cos32[p], sin32[p], layout)
    return out


# Fused into the QKV projection: x (T,hidden) bf16, w_qkv (hidden, (Hq + 2 Hk) D) bf16, NeoX, full rotary.
def qkv_inputs(params: dict, seed: int, device: str) -> dict:
    g = torch.Generator(device=device).manual_seed(seed)
    t, hid, d = params["tokens"], params["hidden"], params["head_dim"]
    n = (params["q_heads"] + 2 * params["kv_heads"]) * d
    x = torch.randn(t, hid, generator=g, device=device).to(torch.bfloat16)
    w = (torch.randn(hid, n, generator=g, device=device) / math.sqrt(hid)).to(torch.bfloat16)
    gc = torch.Generator(device="cpu").manual_seed(seed)
    pos = torch.randint(0, params["max_pos"], (t,), generator=gc).to(device=device, dtype=torch.int32)
    tabs = _tables(params["max_pos"], d, device)
    return {"x": x, "w_qkv": w, "pos": pos, "cos32": tabs["cos32"], "sin32": tabs["sin32"],
            "head_dim": d, "rot_heads": params["q_heads"] + params["kv_heads"]}


def qkv_output(params: dict, device: str) -> torch.Tensor:
    n = (params["q_heads"] + 2 * params["kv_heads"]) * params["head_dim"]
    return torch.empty(params["tokens"], n, device=device, dtype=torch.bfloat16)


def qkv_reference(x, w_qkv, pos, cos32, sin32, head_dim, rot_heads) -> torch.Tensor:
    """fp64 x @ W_qkv with Q and K heads rotated (NeoX, fp64 angles), V as is: (T, N) float64."""
    y = (x.double() @ w_qkv.double()).view(x.shape[0], -1, head_dim)
    ang = _angles64(pos, head_dim)
    out = y.clone()
    rope.rotate_into(out[:, :rot_heads], y[:, :rot_heads], ang.cos(), ang.sin(), "neox")
    return out.view(x.shape[0], -1)


def qkv_lowp(x, w_qkv, pos, cos32, sin32, head_dim, rot_heads) -> torch.Tensor:
    """bf16 GEMM with bf16 output, then the fp32-table rotation rounded to bf16."""
    y = (x @ w_qkv).view(x.shape[0], -1, head_dim)
    out = y.clone()
    p = pos.long()
    rope.rotate_into(out[:, :rot_heads], y[:, :rot_heads], cos32[p], sin32[p], "neox")
    return out.view(x.shape[0], -1)
