"""Oracle and inputs for RMSNorm / LayerNorm with an optional residual add: bf16 activations, fp64 oracle.

The output is (2,T,H) bf16 with a residual (out[0] the normalised rows, out[1] the new residual
x + residual), else (1,T,H)."""
from __future__ import annotations

import torch

EPS = 1e-6


def make_inputs(params: dict, seed: int, device: str) -> dict:
    """x, residual (T,H) bf16 ~ N(0,1) (residual None without params["residual"]); weight (H,) ~ 1 + N(0,0.1^2),
    bias (H,) ~ N(0,0.1^2), both bf16; kind "rms" or "layer"; eps."""
    g = torch.Generator(device=device).manual_seed(seed)
    t, n = params["tokens"], params["hidden"]
    x = torch.randn(t, n, generator=g, device=device).to(torch.bfloat16)
    res = torch.randn(t, n, generator=g, device=device).to(torch.bfloat16) if params.get("residual") else None
    w = (1 + 0.1 * torch.randn(n, generator=g, device=device)).to(torch.bfloat16)
    b = (0.1 * torch.randn(n, generator=g, device=device)).to(torch.bfloat16)
    return {"x": x, "residual": res, "weight": w, "bias": b, "kind": params["kind"], "eps": EPS}


def empty_output(params: dict, device: str) -> torch.Tensor:
    """Uninitialised (2,T,H) bf16 with a residual, else (1,T,H)."""
    return torch.empty(2 if params.get("residual") else 1, params["tokens"], params["hidden"],
                       device=device, dtype=torch.bfloat16)


def _norm(h: torch.Tensor, weight, bias, kind: str, eps: float) -> torch.Tensor:
    if kind == "layer":
        h = h - h.mean(-1, keepdim=True)
    y = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + eps) * weight.to(h.dtype)
    return y + bias.to(h.dtype) if kind == "layer" else y


def reference(x, residual, weight, bias, kind, eps) -> torch.Tensor:
    """fp64: (norm(x + residual) * weight [+ bias], x + residual) stacked, (2|1,T,H) float64."""
    h = x.double() + residual.double() if residual is not None else x.double()
    y = _norm(h, weight, bias, kind, eps)
    return torch.stack((y, h)) if residual is not None else y[None]


def lowp(x, residual, weight, bias, kind, eps) -> torch.Tensor:
    """The same math in fp32 from the bf16-rounded residual sum, each output rounded to bf16 once."""
    h = (x + residual) if residual is not None else x
    y = _norm(h.float(), weight, bias, kind, eps).to(torch.bfloat16)
    return torch.stack((y, h)) if residual is not None else y[None]
