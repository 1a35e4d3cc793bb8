"""Oracle and inputs for the exp2 variants: fp64 exp2 inside three kernels (elementwise sum, softmax).

A case's `kind` picks the kernel: "sum" computes out[i] = sum_{j<terms} 2**(x[i] - j*delta) (terms=1
is plain exp2, memory-bound; terms=64 is the compute-bound microbenchmark), "chain" iterates
x <- 2**x - delta `terms` times (a contraction on [-1, -0.5] for delta = 1.5; the leaner
compute-bound microbenchmark), "softmax" a row softmax of bf16 logits. Inputs carry `kind`, `terms` and `delta` beside the tensor `x`.
"""
from __future__ import annotations

import functools

import torch

from suite.lib.exp2 import exp2_variant_torch


def make_inputs(params: dict, seed: int, device: str) -> dict:
    """x: "sum" (n,) fp32, uniform in [lo, 0] on a 2**-10 grid when terms > 1 (so x - j*delta is
    exact in fp32); "softmax" (rows, cols) bf16 logits, 4 * standard normal."""
    g = torch.Generator(device=device).manual_seed(seed)
    kind = params["kind"]
    if kind == "sum":
        n, terms, lo = params["n"], params["terms"], params["lo"]
        u = torch.rand(n, generator=g, device=device, dtype=torch.float64)
        x = lo * u if terms == 1 else -torch.floor(-lo * 1024 * u) / 1024
        return {"x": x.float(), "kind": kind, "terms": terms, "delta": params.get("delta", 0.0)}
    if kind == "chain":
        x = -1.0 + 0.5 * torch.rand(params["n"], generator=g, device=device)
        return {"x": x, "kind": kind, "terms": params["terms"], "delta": params["shift"]}
    if kind == "softmax":
        x = 4.0 * torch.randn(params["rows"], params["cols"], generator=g, device=device)
        return {"x": x.to(torch.bfloat16), "kind": kind, "terms": 1, "delta": 0.0}
    raise ValueError(f"unknown kind {kind!r}")


def empty_output(params: dict, device: str) -> torch.Tensor:
    """Uninitialised output: (n,) fp32 for "sum" and "chain", (rows, cols) bf16 for "softmax"."""
    if params["kind"] == "softmax":
        return torch.empty(params["rows"], params["cols"], device=device, dtype=torch.bfloat16)
    return torch.empty(params["n"], device=device, dtype=torch.float32)


def reference(x: torch.Tensor, kind: str, terms: int, delta: float) -> torch.Tensor:
    """fp64 oracle of the kernel `kind`, same shape as the output, float64."""
    x64 = x.double()
    if kind == "softmax":
        return torch.softmax(x64, dim=-1)
    if kind == "chain":
        for _ in range(terms):
            x64 = torch.exp2(x64) - delta
        return x64
    geometric = sum(2.0 ** (-j * delta) for j in range(terms))  # exact enough in fp64
    return torch.exp2(x64) * geometric


def _lowp(x: torch.Tensor, kind: str, terms: int, delta: float, degree: int) -> torch.Tensor:
    if kind == "softmax":
        xf = x.float()
        e = exp2_variant_torch(xf * 1.4426950408889634 - xf.amax(-1, keepdim=True) * 1.4426950408889634, degree)
        return (e / e.sum(-1, keepdim=True)).to(torch.bfloat16)
    if kind == "chain":
        xs = x.clone()
        for _ in range(terms):
            xs = exp2_variant_torch(xs, degree) - delta
        return xs
    acc, xs = torch.zeros_like(x), x.clone()
    for _ in range(terms):
        acc += exp2_variant_torch(xs, degree)
        xs -= delta
    return acc


# The kernel in fp32 torch with torch.exp2 (the accuracy class of hardware exp2), and with the
# degree-1..5 polynomial exp2: the tolerances' low-precision runs, (x, kind, terms, delta) -> fp32.
lowp_fp32 = functools.partial(_lowp, degree=0)
lowp_poly1 = functools.partial(_lowp, degree=1)
lowp_poly2 = functools.partial(_lowp, degree=2)
lowp_poly3 = functools.partial(_lowp, degree=3)
lowp_poly4 = functools.partial(_lowp, degree=4)
lowp_poly5 = functools.partial(_lowp, degree=5)
