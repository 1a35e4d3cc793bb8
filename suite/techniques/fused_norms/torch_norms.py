"""RMSNorm / LayerNorm in torch: unfused elementwise ops, torch.nn.functional, and torch.compile of the
unfused ops (one compiled graph per shape: dynamic=False)."""
from __future__ import annotations

import torch
import torch.nn.functional as F

_COMPILED: dict = {}


def _unfused(x, residual, weight, bias, kind: str, eps: float):
    """The Hugging Face Llama / BERT formulation: (y, h) with h = x + residual (or x)."""
    h = x + residual if residual is not None else x
    hf = h.float()
    if kind == "layer":
        hf = hf - hf.mean(-1, keepdim=True)
    y = hf * torch.rsqrt(hf.pow(2).mean(-1, keepdim=True) + eps)
    y = weight * y.to(x.dtype)
    return (y + bias if kind == "layer" else y), h


def _functional(x, residual, weight, bias, kind: str, eps: float):
    h = x + residual if residual is not None else x
    n = (x.shape[-1],)
    y = F.layer_norm(h, n, weight, bias, eps) if kind == "layer" else F.rms_norm(h, n, weight, eps)
    return y, h


def run(out, x, residual, weight, bias, kind: str, eps: float, mode: str = "unfused") -> None:
    """out (2|1,T,H) bf16 = (norm(x + residual) * weight [+ bias], x + residual); x, residual (T,H) bf16."""
    if mode == "compile":
        key = (kind, residual is not None)
        if key not in _COMPILED:
            _COMPILED[key] = torch.compile(_unfused, dynamic=False)
        y, h = _COMPILED[key](x, residual, weight, bias, kind, eps)
    else:
        y, h = (_functional if mode == "functional" else _unfused)(x, residual, weight, bias, kind, eps)
    out[0].copy_(y)
    if residual is not None:
        out[1].copy_(h)
