"""Triton exp2 variants (MUFU, polynomial on the FMA units, hybrid split) and the kernels using them.

Every kernel takes its data in 16 units per block, as five sub-blocks of 8, 4, 2, 1 and 1 units;
bit i of POLY_MASK sends sub-block i to the polynomial, the rest to MUFU (`ex2.approx`), so a
hybrid that sends k/16 of the elements to the polynomial is one constexpr and no `tl.where`
(which would evaluate both paths).
"""
from __future__ import annotations

import torch
import triton
import triton.language as tl

from suite.lib.exp2 import coeffs5, poly_mask
from suite.lib.exp2_triton import exp2_poly, to_bf16
from suite.lib.interp import interpreting

LOG2E = 1.4426950408889634


@triton.jit
def exp2_any(x, USE_POLY: tl.constexpr, DEGREE: tl.constexpr, C1: tl.constexpr, C2: tl.constexpr,
             C3: tl.constexpr, C4: tl.constexpr, C5: tl.constexpr, INTERPRET: tl.constexpr):
    """2**x by the polynomial (USE_POLY) or by the hardware unit (MUFU.EX2)."""
    if USE_POLY:
        return exp2_poly(x, DEGREE, C1, C2, C3, C4, C5, INTERPRET)
    else:
        return tl.math.exp2(x)


@triton.jit
def _sum_terms(x_ptr, out_ptr, offs, n, terms, delta, USE_POLY: tl.constexpr, DEGREE: tl.constexpr,
               C1: tl.constexpr, C2: tl.constexpr, C3: tl.constexpr, C4: tl.constexpr,
               C5: tl.constexpr, INTERPRET: tl.constexpr):
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    acc = tl.zeros_like(x)
    for _ in range(terms):
        acc += exp2_any(x, USE_POLY, DEGREE, C1, C2, C3, C4, C5, INTERPRET)
        x -= delta
    tl.store(out_ptr + offs, acc, mask=offs < n)


@triton.jit(do_not_specialize=["terms"])  # terms=1 and 64 share one compile
def exp2_sum_kernel(x_ptr, out_ptr, n, terms, delta, U: tl.constexpr, POLY_MASK: tl.constexpr,
                    DEGREE: tl.constexpr, C1: tl.constexpr, C2: tl.constexpr, C3: tl.constexpr,
                    C4: tl.constexpr, C5: tl.constexpr, INTERPRET: tl.constexpr):
    """out[i] = sum_{j<terms} 2**(x[i] - j*delta); x, out (n,) fp32. terms=1 is plain exp2."""
    base = tl.program_id(0).to(tl.int64) * (16 * U)
    # Sub-blocks interleave in one loop (below) so MUFU and FMA work overlap inside each warp.
    o0 = base + tl.arange(0, 8 * U)
    o1 = base + 8 * U + tl.arange(0, 4 * U)
    o2 = base + 12 * U + tl.arange(0, 2 * U)
    o3 = base + 14 * U + tl.arange(0, U)
    o4 = base + 15 * U + tl.arange(0, U)
    x0 = tl.load(x_ptr + o0, mask=o0 < n, other=0.0)
    x1 = tl.load(x_ptr + o1, mask=o1 < n, other=0.0)
    x2 = tl.load(x_ptr + o2, mask=o2 < n, other=0.0)
    x3 = tl.load(x_ptr + o3, mask=o3 < n, other=0.0)
    x4 = tl.load(x_ptr + o4, mask=o4 < n, other=0.0)
    a0, a1, a2, a3, a4 = tl.zeros_like(x0), tl.zeros_like(x1), tl.zeros_like(x2), tl.zeros_like(x3), tl.zeros_like(x4)
    for _ in range(terms):
        a0 += exp2_any(x0, (POLY_MASK & 1) != 0, DEGREE, C1, C2, C3, C4, C5, INTERPRET)
        a1 += exp2_any(x1, (POLY_MASK & 2) != 0, DEGREE, C1, C2, C3, C4, C5, INTERPRET)
        a2 += exp2_any(x2, (POLY_MASK & 4) != 0, DEGREE, C1, C2, C3, C4, C5, INTERPRET)
        a3 += exp2_any(x3, (POLY_MASK & 8) != 0, DEGREE, C1, C2, C3, C4, C5, INTERPRET)
        a4 += exp2_any(x4, (POLY_MASK & 16) != 0, DEGREE, C1, C2, C3, C4, C5, INTERPRET)
        x0 -= delta
        x1 -= delta
        x2 -= delta
        x3 -= delta
        x4 -= delta
    tl.store(out_ptr + o0, a0, mask=o0 < n)
    tl.store(out_ptr + o1, a1, mask=o1 < n)
    tl.store(out_ptr + o2, a2, mask=o2 < n)
    tl.store(out_ptr + o3, a3, mask=o3 < n)
    tl.store(out_ptr + o4, a4, mask=o4 < n)


@triton.jit(do_not_specialize=["terms"])
def exp2_chain_kernel(x_ptr, out_ptr, n, terms, shift, U: tl.constexpr, POLY_MASK: tl.constexpr,
                      DEGREE: tl.constexpr, C1: tl.constexpr, C2: tl.constexpr, C3: tl.constexpr,
                      C4: tl.constexpr, C5: tl.constexpr, INTERPRET: tl.constexpr):
    """out[i] = x_terms for x_0 = x[i], x_{j+1} = 2**x_j - shift; x, out (n,) fp32. One FADD per
    exp2 beside it (the sum kernel has two); for shift 1.5 and x in [-1, -0.5] the map contracts."""
    base = tl.program_id(0).to(tl.int64) * (16 * U)
    o0 = base + tl.arange(0, 8 * U)
    o1 = base + 8 * U + tl.arange(0, 4 * U)
    o2 = base + 12 * U + tl.arange(0, 2 * U)
    o3 = base + 14 * U + tl.arange(0, U)
    o4 = base + 15 * U + tl.arange(0, U)
    x0 = tl.load(x_ptr + o0, mask=o0 < n, other=-1.0)
    x1 = tl.load(x_ptr + o1, mask=o1 < n, other=-1.0)
    x2 = tl.load(x_ptr + o2, mask=o2 < n, other=-1.0)
    x3 = tl.load(x_ptr + o3, mask=o3 < n, other=-1.0)
    x4 = tl.load(x_ptr + o4, mask=o4 < n, other=-1.0)
    for _ in range(terms):
        x0 = exp2_any(x0, (POLY_MASK & 1) != 0, DEGREE, C1, C2, C3, C4, C5, INTERPRET) - shift
        x1 = exp2_any(x1, (POLY_MASK & 2) != 0, DEGREE, C1, C2, C3, C4, C5, INTERPRET) - shift
        x2 = exp2_any(x2, (POLY_MASK & 4) != 0, DEGREE, C1, C2, C3, C4, C5, INTERPRET) - shift
        x3 = exp2_any(x3, (POLY_MASK & 8) != 0, DEGREE, C1, C2, C3, C4, C5, INTERPRET) - shift
        x4 = exp2_any(x4, (POLY_MASK & 16) != 0, DEGREE, C1, C2, C3, C4, C5, INTERPRET) - shift
    tl.store(out_ptr + o0, x0, mask=o0 < n)
    tl.store(out_ptr + o1, x1, mask=o1 < n)
    tl.store(out_ptr + o2, x2, mask=o2 < n)
    tl.store(out_ptr + o3, x3, mask=o3 < n)
    tl.store(out_ptr + o4, x4, mask=o4 < n)


@triton.jit
def _row_exp(x_ptr, offs, m, USE_POLY: tl.constexpr, DEGREE: tl.constexpr, C1: tl.constexpr,
             C2: tl.constexpr, C3: tl.constexpr, C4: tl.constexpr, C5: tl.constexpr,
             INTERPRET: tl.constexpr):
    x = tl.load(x_ptr + offs).to(tl.float32)
    return exp2_any(x * 1.4426950408889634 - m, USE_POLY, DEGREE, C1, C2, C3, C4, C5, INTERPRET)


@triton.jit
def softmax_kernel(x_ptr, out_ptr, C: tl.constexpr, POLY_MASK: tl.constexpr, DEGREE: tl.constexpr,
                   C1: tl.constexpr, C2: tl.constexpr, C3: tl.constexpr, C4: tl.constexpr,
                   C5: tl.constexpr, INTERPRET: tl.constexpr):
    """Row softmax: out (R,C) bf16 = softmax(x (R,C) bf16) along C, one program per row."""
    U: tl.constexpr = C // 16
    row = tl.program_id(0).to(tl.int64) * C
    o0 = row + tl.arange(0, 8 * U)
    o1 = row + 8 * U + tl.arange(0, 4 * U)
    o2 = row + 12 * U + tl.arange(0, 2 * U)
    o3 = row + 14 * U + tl.arange(0, U)
    o4 = row + 15 * U + tl.arange(0, U)
    m = tl.max(tl.load(x_ptr + o0).to(tl.float32), 0)
    m = tl.maximum(m, tl.max(tl.load(x_ptr + o1).to(tl.float32), 0))
    m = tl.maximum(m, tl.max(tl.load(x_ptr + o2).to(tl.float32), 0))
    m = tl.maximum(m, tl.max(tl.load(x_ptr + o3).to(tl.float32), 0))
    m = tl.maximum(m, tl.max(tl.load(x_ptr + o4).to(tl.float32), 0))
    m = m * 1.4426950408889634
    e0 = _row_exp(x_ptr, o0, m, (POLY_MASK & 1) != 0, DEGREE, C1, C2, C3, C4, C5, INTERPRET)
    e1 = _row_exp(x_ptr, o1, m, (POLY_MASK & 2) != 0, DEGREE, C1, C2, C3, C4, C5, INTERPRET)
    e2 = _row_exp(x_ptr, o2, m, (POLY_MASK & 4) != 0, DEGREE, C1, C2, C3, C4, C5, INTERPRET)
    e3 = _row_exp(x_ptr, o3, m, (POLY_MASK & 8) != 0, DEGREE, C1, C2, C3, C4, C5, INTERPRET)
    e4 = _row_exp(x_ptr, o4, m, (POLY_MASK & 16) != 0, DEGREE, C1, C2, C3, C4, C5, INTERPRET)
    inv = 1.0 / (tl.sum(e0, 0) + tl.sum(e1, 0) + tl.sum(e2, 0) + tl.sum(e3, 0) + tl.sum(e4, 0))
    tl.store(out_ptr + o0, to_bf16(e0 * inv, INTERPRET))
    tl.store(out_ptr + o1, to_bf16(e1 * inv, INTERPRET))
    tl.store(out_ptr + o2, to_bf16(e2 * inv, INTERPRET))
    tl.store(out_ptr + o3, to_bf16(e3 * inv, INTERPRET))
    tl.store(out_ptr + o4, to_bf16(e4 * inv, INTERPRET))


def variant_args(degree: int, sixteenths: int) -> dict:
    """Constexpr arguments of a variant: `sixteenths`/16 of the elements go to the polynomial."""
    c1, c2, c3, c4, c5 = coeffs5(max(degree, 1))
    return dict(POLY_MASK=poly_mask(sixteenths), DEGREE=max(degree, 1), C1=c1, C2=c2, C3=c3,
                C4=c4, C5=c5, INTERPRET=interpreting())


def launch(out: torch.Tensor, x: torch.Tensor, kind: str, terms: int, delta: float,
           degree: int, sixteenths: int) -> None:
    """Run one exp2 variant in the kernel `kind`: "sum" or "chain" (x, out (n,) fp32; `delta` is
    the chain's shift), "softmax" (x, out (R,C) bf16)."""
    args = variant_args(degree, sixteenths)
    if kind in ("sum", "chain"):
        u = 256 if interpreting() else 128  # interpreter: few large programs run faster
        n = x.numel()
        kernel = exp2_sum_kernel if kind == "sum" else exp2_chain_kernel
        kernel[(triton.cdiv(n, 16 * u),)](x, out, n, terms, delta, U=u, num_warps=4, **args)
    elif kind == "softmax":
        rows, cols = x.shape
        softmax_kernel[(rows,)](x, out, C=cols, num_warps=8 if cols >= 4096 else 4, **args)
    else:
        raise ValueError(f"unknown kind {kind!r}")
