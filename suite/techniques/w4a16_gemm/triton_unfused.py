"""Unfused W4A16 at its best: one Triton pass writes the bf16 weights (K,N), then cuBLAS (torch.mm)."""
from __future__ import annotations

import torch
import triton
import triton.language as tl

from suite.lib.interp import interpreting


@triton.jit
def dequant_kernel(qw_ptr, s_ptr, w_ptr, K, N, GROUP: tl.constexpr, BK: tl.constexpr, BN: tl.constexpr):
    rk = tl.program_id(0) * BK + tl.arange(0, BK)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    mask = (rk[:, None] < K) & (rn[None, :] < N)
    words = tl.load(qw_ptr + (rk // 8)[:, None] * N + rn[None, :], mask=mask, other=0)
    q = ((words >> (4 * (rk % 8))[:, None]) & 0xF) - 8
    s = tl.load(s_ptr + (rk // GROUP)[:, None] * N + rn[None, :], mask=mask, other=0.0)
    tl.store(w_ptr + rk[:, None] * N + rn[None, :], q.to(tl.float32) * s.to(tl.float32), mask=mask)


def dequantize(qweight: torch.Tensor, scales: torch.Tensor, dtype=torch.bfloat16) -> torch.Tensor:
    """qweight (K/8,N) int32, scales (K/G,N) fp16 -> (K,N) weights q * s in `dtype`."""
    kw, n = qweight.shape
    k = kw * 8
    # fp32 under the interpreter, rounded by torch: its fp32 -> bf16 store truncates.
    w = torch.empty(k, n, device=qweight.device, dtype=torch.float32 if interpreting() else dtype)
    grid = (triton.cdiv(k, 64), triton.cdiv(n, 128))
    dequant_kernel[grid](qweight, scales, w, k, n, GROUP=k // scales.shape[0], BK=64, BN=128)
    return w.to(dtype)


def run(out, a, qweight, scales, w_bf16=None, qweight_k16=None) -> None:
    """out (M,N) bf16 = a (M,K) bf16 @ W, W (K,N) bf16 written by one dequantize kernel first."""
    torch.mm(a, dequantize(qweight, scales), out=out)
