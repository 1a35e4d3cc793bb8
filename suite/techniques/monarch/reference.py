"""Oracle and inputs for Monarch and butterfly products: one orthogonal butterfly matrix held in three
forms (its twiddles, its Monarch factors, its dense n x n matrix), each rounded to bf16 from fp64."""
from __future__ import annotations

import torch

from suite.techniques.monarch.factors import monarch_dense, monarch_of_butterfly, random_butterfly


def make_inputs(params: dict, seed: int, device: str) -> dict[str, torch.Tensor]:
    """x (B, n) bf16 ~ N(0,1); tw (log2 n, 2, 2, n/2), blk_r (nb, bs, bs), blk_l (bs, nb, nb), w (n, n),
    all bf16 from the same fp64 butterfly; w64 (n, n) fp64 the exact matrix (the oracle's)."""
    g = torch.Generator(device=device).manual_seed(seed)
    b, n, nb = params["batch"], params["n"], params["nb"]
    x = torch.randn(b, n, generator=g, device=device).to(torch.bfloat16)
    tw = random_butterfly(n, g, device)
    blk_r, blk_l = monarch_of_butterfly(tw, nb)
    w64 = monarch_dense(blk_l, blk_r)
    bf = torch.bfloat16
    return {"x": x, "tw": tw.to(bf), "blk_r": blk_r.to(bf), "blk_l": blk_l.to(bf), "w": w64.to(bf), "w64": w64}


def empty_output(params: dict, device: str) -> torch.Tensor:
    """Uninitialised (B, n) bf16 output."""
    return torch.empty(params["batch"], params["n"], device=device, dtype=torch.bfloat16)


def reference(x, w64, **_) -> torch.Tensor:
    """fp64 x @ W^T with the exact butterfly matrix: (B, n) float64."""
    return x.double() @ w64.t()


def lowp_dense(x, w, **_) -> torch.Tensor:
    """The dense bf16 GEMM on the bf16-rounded matrix, bf16 output: (B, n) bf16."""
    return x @ w.t()
