"""Oracle and inputs for FP64 GEMM: an extended-precision product where affordable, native fp64,
and plain runs of the Ozaki scheme."""
from __future__ import annotations

import numpy as np
import torch

from suite.techniques.gemm_fp64_ozaki.common import exact_fp64_mm, ozaki_matmul

EXTENDED_MAX_WORK = 1 << 25  # m*n*k up to this: long-double oracle on the CPU (64-bit mantissa)


def make_inputs(params: dict, seed: int, device: str) -> dict[str, torch.Tensor]:
    """a (m,k), b (k,n) fp64 normal; params["spread"] = s scales each element by 2**U{-s..s}."""
    g = torch.Generator(device=device).manual_seed(seed)
    m, n, k = params["m"], params["n"], params["k"]
    out = {}
    for name, shape in (("a", (m, k)), ("b", (k, n))):
        x = torch.randn(shape, generator=g, device=device, dtype=torch.float64)
        s = params.get("spread", 0)
        if s:
            x = torch.ldexp(x, torch.randint(-s, s + 1, shape, generator=g, device=device).double())
        out[name] = x
    return out


def empty_output(params: dict, device: str) -> torch.Tensor:
    """Uninitialised (m,n) fp64 output."""
    return torch.empty(params["m"], params["n"], device=device, dtype=torch.float64)


def reference(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """a @ b (m,n) float64: in x87 long double (64-bit mantissa) when small enough, else in fp64
    on the device (then the oracle is itself fp64-rounded; noted beside the results)."""
    if a.shape[0] * a.shape[1] * b.shape[1] <= EXTENDED_MAX_WORK and np.finfo(np.longdouble).nmant >= 63:
        ad = a.cpu().numpy().astype(np.longdouble)
        bd = b.cpu().numpy().astype(np.longdouble)
        return torch.from_numpy((ad @ bd).astype(np.float64)).to(a.device)
    return a @ b


def lowp_fp64(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Native fp64 GEMM (m,n) float64."""
    return a @ b


def _scheme(s: int):
    def lowp(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return ozaki_matmul(a, b, s, exact_fp64_mm)

    lowp.__doc__ = f"Ozaki with {s} int8 slices, slice products as exact fp64 GEMMs (m,n) float64."
    return lowp


lowp_ozaki_s6, lowp_ozaki_s7, lowp_ozaki_s8 = _scheme(6), _scheme(7), _scheme(8)
