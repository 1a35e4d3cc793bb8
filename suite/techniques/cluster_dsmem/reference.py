"""Oracle and inputs for the cluster GEMM: x (M,K), w (N,K) bf16 ~ N(0,1)/sqrt(K) scale."""
from __future__ import annotations

import torch


def make_inputs(params: dict, seed: int, device: str) -> dict[str, torch.Tensor]:
    """x (M,K) bf16 ~ N(0,1); w (N,K) bf16 ~ N(0, 1/K)."""
    g = torch.Generator(device=device).manual_seed(seed)
    m, n, k = params["m"], params["n"], params["k"]
    x = torch.randn(m, k, generator=g, device=device).to(torch.bfloat16)
    w = (torch.randn(n, k, generator=g, device=device) / k ** 0.5).to(torch.bfloat16)
    return {"x": x, "w": w}


def empty_output(params: dict, device: str) -> torch.Tensor:
    """Uninitialised (M,N) bf16 output."""
    return torch.empty(params["m"], params["n"], device=device, dtype=torch.bfloat16)


def reference(x, w) -> torch.Tensor:
    """fp64 x @ w^T: (M,N) float64."""
    return x.double() @ w.double().t()


def lowp(x, w) -> torch.Tensor:
    """bf16 GEMM with bf16 output: (M,N) bf16."""
    return x @ w.t()
