"""Elementwise activations in Triton, each one read and one write: GELU (exact with erf, or the tanh
approximation) and SwiGLU (silu(gate) * up from a merged gate/up tensor)."""
from __future__ import annotations

import torch
import triton
import triton.language as tl

from suite.lib.interp import interpreting
from suite.lib.triton_round import round_bf16

BLOCK = 2048


@triton.jit
def gelu_f32(x, APPROX: tl.constexpr):
    """GELU of fp32 x: exact 0.5 x (1 + erf(x / sqrt 2)), or tanh's form x * sigmoid(2u) with
    u = sqrt(2/pi) (x + 0.044715 x^3) (0.5 (1 + tanh u) = sigmoid(2u))."""
    if APPROX:
        u = 0.7978845608028654 * (x + 0.044715 * x * x * x)
        return x / (1.0 + tl.exp(-2.0 * u))
    return 0.5 * x * (1.0 + tl.math.erf(x * 0.7071067811865476))


@triton.jit
def _store(ptr, offs, y, mask, ROUND: tl.constexpr):
    if ROUND:  # the CPU interpreter's fp32 -> bf16 cast truncates
        y = round_bf16(y)
    tl.store(ptr + offs, y.to(ptr.dtype.element_ty), mask=mask)


@triton.jit
def _gelu_kernel(x_ptr, y_ptr, n, APPROX: tl.constexpr, BLOCK: tl.constexpr, ROUND: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    _store(y_ptr, offs, gelu_f32(x, APPROX), mask, ROUND)


@triton.jit
def _swiglu_kernel(gu_ptr, y_ptr, cols, s_gu, s_y, BLOCK: tl.constexpr, ROUND: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    c = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = c < cols
    g = tl.load(gu_ptr + row * s_gu + c, mask=mask, other=0.0).to(tl.float32)
    u = tl.load(gu_ptr + row * s_gu + cols + c, mask=mask, other=0.0).to(tl.float32)
    _store(y_ptr + row * s_y, c, g * tl.sigmoid(g) * u, mask, ROUND)


def _round(t: torch.Tensor) -> bool:
    return interpreting() and t.dtype == torch.bfloat16


def gelu(y: torch.Tensor, x: torch.Tensor, approximate: str = "none") -> None:
    """y = GELU(x), any shape, contiguous, bf16/fp16/fp32; approximate "none" (erf) or "tanh"."""
    n = x.numel()
    _gelu_kernel[(triton.cdiv(n, BLOCK),)](x, y, n, APPROX=approximate == "tanh", BLOCK=BLOCK,
                                           ROUND=_round(y), num_warps=8)


def swiglu(y: torch.Tensor, gate_up: torch.Tensor) -> None:
    """y (T,I) = silu(gate_up[:, :I]) * gate_up[:, I:]; gate_up (T,2I); unit stride along columns."""
    t, cols = y.shape
    block = min(BLOCK, triton.next_power_of_2(cols))
    _swiglu_kernel[(t, triton.cdiv(cols, block))](gate_up, y, cols, gate_up.stride(0), y.stride(0),
                                                  BLOCK=block, ROUND=_round(y), num_warps=max(1, min(8, block // 256)))
