"""GELU probe: the approximation's own error against the bf16 rounding it hides under."""
from __future__ import annotations

import torch

from suite.techniques.activations import reference as R


def _approx_rows(fn, device: str, seed: int) -> list[dict]:
    """The implementation run in fp32 (so bf16 rounding does not hide its formula's error) against
    fp64 erf GELU: the largest absolute error on a grid over [-10, 10] and the relative error on
    N(0, 2^2) draws, beside the relative error of rounding exact GELU to bf16 on the same draws."""
    grid = torch.linspace(-10, 10, 1 << 20, device=device)
    y = torch.empty_like(grid)
    fn(y, x=grid)
    abs_max = (y.double() - R.gelu64(grid)).abs().max().item()
    x = 2 * torch.randn(1 << 20, generator=torch.Generator(device=device).manual_seed(seed), device=device)
    fn(y, x=x)
    ref = R.gelu64(x)
    norm = torch.linalg.vector_norm(ref).item()
    approx = torch.linalg.vector_norm(y.double() - ref).item() / norm
    bf16 = torch.linalg.vector_norm(ref.float().to(torch.bfloat16).double() - ref).item() / norm
    stats = {"grid": "2^20 points on [-10, 10]", "draws": "2^20 of N(0, 2^2)", "fp32_run": True}
    return [{"metric": m, "unit": u, "direction": "lower", "value": v, "stats": stats}
            for m, u, v in (("approx_abs_err_max", "1", abs_max), ("approx_rel_err", "1", approx),
                            ("bf16_rounding_rel_err", "1", bf16), ("approx_over_bf16", "1", approx / bf16))]


def gelu_probe(fn, case, device: str, seed: int) -> list[dict]:
    """Accuracy rows for cases with params["accuracy"]; nothing for the others."""
    return _approx_rows(fn, device, seed) if case.params.get("accuracy") else []
