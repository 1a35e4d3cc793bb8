"""Oracle and inputs for sparse GEMM: bf16 activations times a bf16 weight with zeros in a pattern
(unstructured, tile-shaped, or 2:4), the weight also held as CSR and as a list of nonzero tiles."""
from __future__ import annotations

import warnings

import torch

from suite.techniques.sparse_gemm.tiles import TILE, tile_lists


def _mask(params: dict, g: torch.Generator, device: str) -> torch.Tensor:
    """(N,K) bool: which weights are nonzero."""
    n, k, d = params["n"], params["k"], params["density"]
    pattern = params["pattern"]
    if pattern == "unstructured":
        return torch.rand(n, k, generator=g, device=device) < d
    if pattern == "block":  # round(d * tiles) whole TILE x TILE tiles, placed at random
        tn, tk = n // TILE, k // TILE
        keep = torch.zeros(tn * tk, dtype=torch.bool, device=device)
        keep[torch.randperm(tn * tk, generator=g, device=device)[:round(d * tn * tk)]] = True
        return keep.view(tn, 1, tk, 1).expand(tn, TILE, tk, TILE).reshape(n, k)
    if pattern == "2:4":  # two of every four consecutive weights along K, at random positions
        score = torch.rand(n, k // 4, 4, generator=g, device=device)
        top = score.topk(2, dim=-1).indices
        return torch.zeros(n, k // 4, 4, dtype=torch.bool, device=device).scatter_(-1, top, True).view(n, k)
    raise ValueError(f"unknown sparsity pattern {pattern!r}")


def make_inputs(params: dict, seed: int, device: str) -> dict:
    """x (M,K) bf16 ~ N(0,1); w (N,K) bf16 ~ N(0,1)/sqrt(density K) on its pattern, zero elsewhere;
    w_csr the same weights in CSR (int32 indices), w_csr32 and x32 the same values in fp32; tile_ptr /
    tile_k its nonzero tiles; on CUDA with the 2:4 pattern also w24_cusparselt (torch's semi-structured
    tensor, where this build has cuSPARSELt)."""
    g = torch.Generator(device=device).manual_seed(seed)
    m, n, k = params["m"], params["n"], params["k"]
    if n % TILE or k % TILE:
        raise ValueError(f"N and K must be multiples of {TILE}")
    x = torch.randn(m, k, generator=g, device=device).to(torch.bfloat16)
    w = torch.randn(n, k, generator=g, device=device) / max(params["density"] * k, 1.0) ** 0.5
    w = (w * _mask(params, g, device)).to(torch.bfloat16)
    with warnings.catch_warnings():  # torch's notes that CSR is in beta and unchecked
        warnings.simplefilter("ignore", UserWarning)
        csr = w.to_sparse_csr()
        crow, col = csr.crow_indices().to(torch.int32), csr.col_indices().to(torch.int32)
        w_csr = torch.sparse_csr_tensor(crow, col, csr.values(), size=(n, k), check_invariants=False)
        w_csr32 = torch.sparse_csr_tensor(crow, col, csr.values().float(), size=(n, k), check_invariants=False)
    tile_ptr, tile_k = tile_lists(w)
    inputs = {"x": x, "w": w, "w_csr": w_csr, "x32": x.float(), "w_csr32": w_csr32,
              "tile_ptr": tile_ptr, "tile_k": tile_k}
    if params["pattern"] == "2:4" and device == "cuda":
        inputs.update(semi_structured(w))
    return inputs


def semi_structured(w: torch.Tensor) -> dict:
    """w (N,K) bf16 2:4 compressed for cuSPARSELt, where this build has it."""
    from torch.sparse import SparseSemiStructuredTensorCUSPARSELT

    # torch's CUTLASS 2:4 kernel refuses sm90 ("Supported only on GPUs with compute capability 8.x",
    # torch 2.11 on the H200), so only cuSPARSELt is built here.
    try:
        return {"w24_cusparselt": SparseSemiStructuredTensorCUSPARSELT.from_dense(w)}
    except (RuntimeError, NotImplementedError):  # no cuSPARSELt in this build: its impl errors
        return {}


def empty_output(params: dict, device: str) -> torch.Tensor:
    """Uninitialised (M,N) bf16 output."""
    return torch.empty(params["m"], params["n"], device=device, dtype=torch.bfloat16)


def reference(x, w, **_) -> torch.Tensor:
    """fp64 x @ w^T: the oracle, (M,N) float64."""
    return x.double() @ w.double().t()


def lowp_dense(x, w, **_) -> torch.Tensor:
    """The dense bf16 GEMM with bf16 output: (M,N) bf16."""
    return x @ w.t()
