"""Oracle and inputs for the tile-order GEMM."""
from __future__ import annotations

import torch


def make_inputs(params: dict, seed: int, device: str) -> dict[str, torch.Tensor]:
    """a (m,k), b (k,n) bf16 standard normal."""
    g = torch.Generator(device=device).manual_seed(seed)
    a = torch.randn(params["m"], params["k"], generator=g, device=device).to(torch.bfloat16)
    b = torch.randn(params["k"], params["n"], generator=g, device=device).to(torch.bfloat16)
    return {"a": a, "b": b}


def empty_output(params: dict, device: str) -> torch.Tensor:
    """Uninitialised (m,n) bf16."""
    return torch.empty(params["m"], params["n"], device=device, dtype=torch.bfloat16)


def reference(a, b) -> torch.Tensor:
    """fp64 a @ b (m,n) float64."""
    return a.double() @ b.double()


def lowp_bf16_out(a, b) -> torch.Tensor:
    """The exact product rounded to bf16: what any bf16-output GEMM must approach."""
    return (a.double() @ b.double()).to(torch.bfloat16)
