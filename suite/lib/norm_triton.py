"""One-pass RMSNorm / LayerNorm in Triton, with an optional fused residual add: each row is read once,
normalised in fp32 registers with one reciprocal square root, and written once (plus the new residual)."""
from __future__ import annotations

import torch
import triton
import triton.language as tl

from suite.lib.interp import interpreting
from suite.lib.triton_round import round_bf16


@triton.jit
def _norm_row(x_ptr, r_ptr, w_ptr, b_ptr, y_ptr, h_ptr, n, sx, sr, sy, sh, eps,
              BLOCK: tl.constexpr, LAYER: tl.constexpr, RESIDUAL: tl.constexpr, ROUND: tl.constexpr):
    # ROUND: round to bf16 by hand before each bf16 store (the CPU interpreter's cast truncates)
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n
    x = tl.load(x_ptr + row * sx + cols, mask=mask, other=0.0).to(tl.float32)
    if RESIDUAL:
        r = tl.load(r_ptr + row * sr + cols, mask=mask, other=0.0).to(tl.float32)
        h = x + r
        if ROUND:
            h = round_bf16(h)
        h = h.to(h_ptr.dtype.element_ty)  # the new residual is normalised as stored (rounded)
        tl.store(h_ptr + row * sh + cols, h, mask=mask)
        x = h.to(tl.float32)
    if LAYER:
        mean = tl.sum(x, axis=0) / n
        x = tl.where(mask, x - mean, 0.0)
    rstd = tl.rsqrt(tl.sum(x * x, axis=0) / n + eps)  # once per row
    y = x * rstd * tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    if LAYER:
        y += tl.load(b_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    if ROUND:
        y = round_bf16(y)
    tl.store(y_ptr + row * sy + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


def num_warps_for(block: int) -> int:
    """Warps per row: 256 elements per warp, 1 to 16."""
    return max(1, min(16, block // 256))


def norm(y: torch.Tensor, x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None = None,
         residual: torch.Tensor | None = None, h: torch.Tensor | None = None, eps: float = 1e-6,
         layer: bool = False) -> None:
    """y (T,H) = norm(x [+ residual]) * weight [+ bias]; with residual, h (T,H) = x + residual.
    x, residual, y, h: (T,H) with unit stride along H; weight, bias: (H,). LayerNorm when layer."""
    t, n = x.shape
    if residual is not None and h is None:
        raise ValueError("a residual add needs h, the buffer for the new residual")
    block = triton.next_power_of_2(n)
    r, hh = (residual, h) if residual is not None else (x, y)
    _norm_row[(t,)](x, r, weight, bias if bias is not None else weight, y, hh, n,
                    x.stride(0), r.stride(0), y.stride(0), hh.stride(0), eps,
                    BLOCK=block, LAYER=layer, RESIDUAL=residual is not None,
                    ROUND=interpreting() and y.dtype == torch.bfloat16,
                    num_warps=num_warps_for(block))
