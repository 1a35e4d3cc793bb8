"""Triton attention forward (FlashAttention-2 style online softmax) with a choice of exp2 and of
rescaling: always, or only when some row's running max grows by more than THRESH (log2 units),
as FlashAttention-4 does. Skipping is exact: p = 2**(s - m_used) with m_used stale by at most
THRESH stays <= 2**THRESH, and the final division by l (summed with the same m_used) cancels it.
"""
from __future__ import annotations

import math

import torch
import triton
import triton.language as tl

from suite.lib.exp2 import coeffs5
from suite.lib.exp2_triton import exp2_poly, to_bf16
from suite.lib.interp import interpreting

LOG2E = 1.4426950408889634


@triton.jit
def _dot(a, b, acc, INTERPRET: tl.constexpr):
    # The interpreter's bf16 dot is wrong; bf16 products are exact in fp32, so upcast there.
    if INTERPRET:
        return tl.dot(a.to(tl.float32), b.to(tl.float32), acc, input_precision="ieee")
    else:
        return tl.dot(a, b, acc)


@triton.jit
def _exp2_block(x, it, EXP: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, DEGREE: tl.constexpr,
                C1: tl.constexpr, C2: tl.constexpr, C3: tl.constexpr, C4: tl.constexpr,
                C5: tl.constexpr, INTERPRET: tl.constexpr):
    """2**x on a (BM, BN) block. EXP: 0 MUFU, 1 polynomial, 2 even columns polynomial and odd
    columns MUFU (half each), 3 polynomial on every 4th KV block (`it`), MUFU on the others."""
    if EXP == 0:
        return tl.math.exp2(x)
    elif EXP == 1:
        return exp2_poly(x, DEGREE, C1, C2, C3, C4, C5, INTERPRET)
    elif EXP == 2:
        # Column pairs (2j, 2j+1) sit in one thread's registers in the MMA layout: no shuffle.
        xa, xb = tl.split(tl.reshape(x, [BM, BN // 2, 2]))
        pa = exp2_poly(xa, DEGREE, C1, C2, C3, C4, C5, INTERPRET)
        return tl.reshape(tl.join(pa, tl.math.exp2(xb)), [BM, BN])
    else:
        if it % 4 == 0:
            p = exp2_poly(x, DEGREE, C1, C2, C3, C4, C5, INTERPRET)
        else:
            p = tl.math.exp2(x)
        return p


@triton.jit
def attn_fwd_kernel(q_ptr, k_ptr, v_ptr, o_ptr, cnt_ptr, S, qk_scale, D: tl.constexpr,
                    BM: tl.constexpr, BN: tl.constexpr, CAUSAL: tl.constexpr, THRESH: tl.constexpr,
                    EXP: tl.constexpr, DEGREE: tl.constexpr, C1: tl.constexpr, C2: tl.constexpr,
                    C3: tl.constexpr, C4: tl.constexpr, C5: tl.constexpr, COUNT: tl.constexpr,
                    INTERPRET: tl.constexpr):
    """o = softmax(q k^T * scale) v for one (BM, D) query block of one (batch, head); q, k, v, o
    (B*H, S, D) bf16 contiguous. THRESH 0 rescales every block; with COUNT, cnt_ptr (3,) int32
    accumulates (KV blocks, blocks where a row max grew, rescales) (growths counted if THRESH)."""
    pid_m = tl.program_id(0)
    base = tl.program_id(1).to(tl.int64) * S * D
    rm = pid_m * BM + tl.arange(0, BM)
    rd = tl.arange(0, D)
    q = tl.load(q_ptr + base + rm[:, None] * D + rd[None, :], mask=rm[:, None] < S, other=0.0)
    m_i = tl.full([BM], float("-inf"), tl.float32)
    l_i = tl.zeros([BM], tl.float32)
    acc = tl.zeros([BM, D], tl.float32)
    hi = tl.minimum((pid_m + 1) * BM, S) if CAUSAL else S
    n_iter, n_grow, n_resc = 0, 0, 0
    for start in range(0, hi, BN):
        rn = start + tl.arange(0, BN)
        k = tl.load(k_ptr + base + rn[:, None] * D + rd[None, :], mask=rn[:, None] < S, other=0.0)
        s = _dot(q, tl.trans(k), tl.zeros([BM, BN], tl.float32), INTERPRET) * qk_scale
        valid = rn[None, :] < S
        if CAUSAL:
            valid = valid & (rm[:, None] >= rn[None, :])
        s = tl.where(valid, s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))
        if THRESH > 0:
            grow = tl.max(m_new - m_i, 0)  # inf on the first block: always taken there
            if COUNT:
                n_grow += (grow > 0).to(tl.int32)
            if grow > THRESH:
                alpha = tl.math.exp2(m_i - m_new)
                acc = acc * alpha[:, None]
                l_i = l_i * alpha
                m_i = m_new
                n_resc += 1
        else:
            alpha = tl.math.exp2(m_i - m_new)
            acc = acc * alpha[:, None]
            l_i = l_i * alpha
            m_i = m_new
            n_resc += 1
        p = _exp2_block(s - m_i[:, None], n_iter, EXP, BM, BN, DEGREE, C1, C2, C3, C4, C5, INTERPRET)
        l_i += tl.sum(p, 1)
        v = tl.load(v_ptr + base + rn[:, None] * D + rd[None, :], mask=rn[:, None] < S, other=0.0)
        acc = _dot(to_bf16(p, INTERPRET), v, acc, INTERPRET)
        n_iter += 1
    o = acc / l_i[:, None]
    tl.store(o_ptr + base + rm[:, None] * D + rd[None, :], to_bf16(o, INTERPRET), mask=rm[:, None] < S)
    if COUNT:
        tl.atomic_add(cnt_ptr + 0, n_iter)
        tl.atomic_add(cnt_ptr + 1, n_grow)
        tl.atomic_add(cnt_ptr + 2, n_resc)


_SCRATCH: dict = {}


def _scratch(device) -> torch.Tensor:
    key = str(device)
    if key not in _SCRATCH:
        _SCRATCH[key] = torch.zeros(3, dtype=torch.int32, device=device)
    return _SCRATCH[key]


def launch(out: torch.Tensor, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool,
           exp: int, degree: int, thresh: float, counts: torch.Tensor | None = None) -> None:
    """out (B,H,S,D) bf16 = attention of q, k, v (B,H,S,D) bf16; for thresh > 0, counts (3,) int32
    (if given) accumulates (KV blocks visited, blocks where some row's max grew, rescales done)."""
    b, h, s, d = q.shape
    interp = interpreting()
    bm, bn = (32, 32) if interp else (128, 64)
    c1, c2, c3, c4, c5 = coeffs5(max(degree, 1))
    # Conditional variants always count (a few scalar adds); the rest never do.
    count = thresh > 0
    cnt = counts if counts is not None else _scratch(q.device)
    grid = (triton.cdiv(s, bm), b * h)
    attn_fwd_kernel[grid](q, k, v, out, cnt, s, LOG2E / math.sqrt(d), D=d, BM=bm, BN=bn,
                          CAUSAL=causal, THRESH=thresh, EXP=exp, DEGREE=max(degree, 1), C1=c1,
                          C2=c2, C3=c3, C4=c4, C5=c5, COUNT=count, INTERPRET=interp,
                          num_warps=1 if interp else (8 if d >= 128 else 4),
                          num_stages=1 if interp else 3)
