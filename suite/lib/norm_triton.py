"""One-pass RMSNorm / LayerNorm in Triton, with an optional fused residual add: each row is read once,
normalised in fp32 registers with one reciprocal square root, and written once (plus the new residual).
A program takes ROWS rows; the config (warps, rows per program) is a function of the hidden size."""
from __future__ import annotations

import torch
import triton
import triton.language as tl

from suite.lib.interp import interpreting
from suite.lib.triton_round import round_bf16


@triton.jit
def _add2(a0, b0, a1, b1):
    return a0 + a1, b0 + b1


@triton.jit
def _norm_rows(x_ptr, r_ptr, w_ptr, b_ptr, y_ptr, h_ptr, t, n, sx, sr, sy, sh, eps,
               BLOCK: tl.constexpr, ROWS: tl.constexpr, LAYER: tl.constexpr, RESIDUAL: tl.constexpr,
               ONE_REDUCE: tl.constexpr, ROUND: tl.constexpr):
    # ROUND: round to bf16 by hand before each bf16 store (the CPU interpreter's cast truncates)
    rows = tl.program_id(0).to(tl.int64) * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, BLOCK)
    rmask = rows < t
    mask = rmask[:, None] & (cols < n)[None, :]
    x = tl.load(x_ptr + rows[:, None] * sx + cols[None, :], mask=mask, other=0.0).to(tl.float32)
    if RESIDUAL:
        r = tl.load(r_ptr + rows[:, None] * sr + cols[None, :], mask=mask, other=0.0).to(tl.float32)
        h = x + r
        if ROUND:
            h = round_bf16(h)
        h = h.to(h_ptr.dtype.element_ty)  # the new residual is normalised as stored (rounded)
        tl.store(h_ptr + rows[:, None] * sh + cols[None, :], h, mask=mask)
        x = h.to(tl.float32)
    if LAYER:
        if ONE_REDUCE:
            # shifted sums: sum(d) and sum(d*d) in one reduction, d = x - (the row's first element),
            # exact in algebra for any shift and well conditioned when the shift is near the mean
            k = tl.load(x_ptr + rows * sx, mask=rmask, other=0.0).to(tl.float32)
            if RESIDUAL:
                k += tl.load(r_ptr + rows * sr, mask=rmask, other=0.0).to(tl.float32)
            d = tl.where(mask, x - k[:, None], 0.0)
            s1, s2 = tl.reduce((d, d * d), 1, _add2)
            m1 = s1 / n
            var = tl.maximum(s2 / n - m1 * m1, 0.0)
            x = tl.where(mask, x - (k + m1)[:, None], 0.0)
        else:
            mean = tl.sum(x, axis=1) / n
            x = tl.where(mask, x - mean[:, None], 0.0)
            var = tl.sum(x * x, axis=1) / n
    else:
        var = tl.sum(x * x, axis=1) / n
    rstd = tl.rsqrt(var + eps)  # once per row
    y = x * rstd[:, None] * tl.load(w_ptr + cols, mask=cols < n, other=0.0).to(tl.float32)[None, :]
    if LAYER:
        y += tl.load(b_ptr + cols, mask=cols < n, other=0.0).to(tl.float32)[None, :]
    if ROUND:
        y = round_bf16(y)
    tl.store(y_ptr + rows[:, None] * sy + cols[None, :], y.to(y_ptr.dtype.element_ty), mask=mask)


def config_for(block: int) -> tuple[int, int]:
    """(num_warps, rows per program) for a power-of-two row block: 4 warps up to 4096, then one warp
    per 1024 elements up to 16; one row per program from 2048 up (the H200 sweep's best or within
    0.2 pt at 2048 and above), below that enough rows for 32 elements per thread per tensor."""
    warps = min(16, max(4, block // 1024))
    return warps, 1 if block >= 2048 else min(16, warps * 32 * 32 // block)


def one_reduce_for(block: int) -> bool:
    """LayerNorm's mean and variance from one reduction below 2048; two reductions from 2048 up (the
    H200 sweep at the heuristic config: +1.9 pt of copy share at 2048, +4.2 at 8192, -0.3 at 4096)."""
    return block < 2048


def norm(y: torch.Tensor, x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None = None,
         residual: torch.Tensor | None = None, h: torch.Tensor | None = None, eps: float = 1e-6,
         layer: bool = False, config: tuple[int, int] | None = None, one_reduce: bool | None = None) -> None:
    """y (T,H) = norm(x [+ residual]) * weight [+ bias]; with residual, h (T,H) = x + residual.
    x, residual, y, h: (T,H) with unit stride along H; weight, bias: (H,). LayerNorm when layer.
    config: (num_warps, rows per program), default config_for(H's block); one_reduce: LayerNorm's
    mean and variance from one reduction (shifted sums) rather than two, default one_reduce_for(block)."""
    t, n = x.shape
    if residual is not None and h is None:
        raise ValueError("a residual add needs h, the buffer for the new residual")
    block = triton.next_power_of_2(n)
    warps, rows = config or config_for(block)
    one_reduce = one_reduce_for(block) if one_reduce is None else one_reduce
    r, hh = (residual, h) if residual is not None else (x, y)
    _norm_rows[(triton.cdiv(t, rows),)](
        x, r, weight, bias if bias is not None else weight, y, hh, t, n,
        x.stride(0), r.stride(0), y.stride(0), hh.stride(0), eps,
        BLOCK=block, ROWS=rows, LAYER=layer, RESIDUAL=residual is not None, ONE_REDUCE=one_reduce,
        ROUND=interpreting() and y.dtype == torch.bfloat16, num_warps=warps)
