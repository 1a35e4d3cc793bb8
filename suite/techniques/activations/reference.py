"""Oracles and inputs: GELU (elementwise), SwiGLU (elementwise over a merged gate/up tensor), and the
gate/up projection with SwiGLU (x @ W_gate, x @ W_up); bf16 operands, fp64 oracles."""
from __future__ import annotations

import math

import torch


def _gen(seed: int, device: str) -> torch.Generator:
    return torch.Generator(device=device).manual_seed(seed)


def gelu64(x: torch.Tensor) -> torch.Tensor:
    """Exact GELU in fp64: 0.5 x (1 + erf(x / sqrt 2))."""
    x = x.double()
    return 0.5 * x * (1 + torch.erf(x / math.sqrt(2)))


def silu_mul64(g: torch.Tensor, u: torch.Tensor) -> torch.Tensor:
    g = g.double()
    return g * torch.sigmoid(g) * u.double()


# GELU: x (T,N) bf16 ~ N(0, 2^2) (pre-activations of a trained FFN span a few units), out (T,N) bf16.
def gelu_inputs(params: dict, seed: int, device: str) -> dict:
    x = 2 * torch.randn(params["tokens"], params["n"], generator=_gen(seed, device), device=device)
    return {"x": x.to(torch.bfloat16)}


def gelu_output(params: dict, device: str) -> torch.Tensor:
    return torch.empty(params["tokens"], params["n"], device=device, dtype=torch.bfloat16)


def gelu_reference(x) -> torch.Tensor:
    """Exact (erf) GELU, fp64: the function both the exact and the tanh implementations stand for."""
    return gelu64(x)


def gelu_lowp(x) -> torch.Tensor:
    """Exact GELU in fp32, rounded to bf16 once."""
    return gelu64(x).float().to(torch.bfloat16)


# SwiGLU: gate_up (T,2I) bf16 ~ N(0, 2^2), out (T,I) bf16.
def swiglu_inputs(params: dict, seed: int, device: str) -> dict:
    gu = 2 * torch.randn(params["tokens"], 2 * params["inter"], generator=_gen(seed, device), device=device)
    return {"gate_up": gu.to(torch.bfloat16)}


def swiglu_output(params: dict, device: str) -> torch.Tensor:
    return torch.empty(params["tokens"], params["inter"], device=device, dtype=torch.bfloat16)


def swiglu_reference(gate_up) -> torch.Tensor:
    i = gate_up.shape[1] // 2
    return silu_mul64(gate_up[:, :i], gate_up[:, i:])


def swiglu_lowp(gate_up) -> torch.Tensor:
    return swiglu_reference(gate_up).float().to(torch.bfloat16)


# Gate/up with SwiGLU: x (T,H) bf16 ~ N(0,1); W_gate, W_up (H,I) bf16 ~ N(0, 1/H); W_gu = [W_gate | W_up].
def gate_up_inputs(params: dict, seed: int, device: str) -> dict:
    g = _gen(seed, device)
    t, h, i = params["tokens"], params["hidden"], params["inter"]
    x = torch.randn(t, h, generator=g, device=device).to(torch.bfloat16)
    w_gu = (torch.randn(h, 2 * i, generator=g, device=device) / math.sqrt(h)).to(torch.bfloat16)
    return {"x": x, "w_gate": w_gu[:, :i].contiguous(), "w_up": w_gu[:, i:].contiguous(), "w_gu": w_gu}


def gate_up_output(params: dict, device: str) -> torch.Tensor:
    return torch.empty(params["tokens"], params["inter"], device=device, dtype=torch.bfloat16)


def gate_up_reference(x, w_gate, w_up, w_gu) -> torch.Tensor:
    """fp64 silu(x @ W_gate) * (x @ W_up), (T,I)."""
    return silu_mul64(x.double() @ w_gate.double(), x.double() @ w_up.double())


def gate_up_lowp(x, w_gate, w_up, w_gu) -> torch.Tensor:
    """Two bf16 GEMMs with bf16 outputs, then silu * up in fp32, rounded to bf16."""
    g, u = (x @ w_gate).float(), (x @ w_up).float()
    return (g * torch.sigmoid(g) * u).to(torch.bfloat16)
