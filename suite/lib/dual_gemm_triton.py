"""A GEMM with two accumulators per tile and an elementwise epilogue that combines them: SwiGLU over a
merged gate/up weight, or RoPE over a QKV weight (the two halves of each head rotated together).

Output column pairs: pair n (0 <= n < N/2) takes weight columns c1 = (n // HALF) * 2 HALF + n % HALF
and c2 = c1 + HALF. SwiGLU: HALF = I (the gate half, then the up half), out[:, n] = silu(acc1) * acc2.
RoPE (NeoX split-half): HALF = head_dim / 2, out[:, c1] = acc1 cos - acc2 sin, out[:, c2] = acc2 cos +
acc1 sin, with cos, sin of (position, n % HALF) from fp32 tables; pairs n >= rot_pairs (V) pass unrotated."""
from __future__ import annotations

import torch
import triton
import triton.language as tl

from suite.lib.interp import interpreting
from suite.lib.triton_round import round_bf16

SWIGLU, ROPE = 0, 1


@triton.jit
def _dual_gemm(a_ptr, w_ptr, o_ptr, pos_ptr, cos_ptr, sin_ptr, M, K, NP, HALF, rot_pairs,
               s_am, s_wk, s_om, s_tab,
               EPI: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
               GROUP_M: tl.constexpr, INTERP: tl.constexpr):
    pid = tl.program_id(0)
    grid_m, grid_n = tl.cdiv(M, BM), tl.cdiv(NP, BN)
    group = pid // (GROUP_M * grid_n)  # grouped order: GROUP_M row blocks share the weight tiles in L2
    first_m = group * GROUP_M
    rows_in_group = min(grid_m - first_m, GROUP_M)
    pid_m = first_m + (pid % (GROUP_M * grid_n)) % rows_in_group
    pid_n = (pid % (GROUP_M * grid_n)) // rows_in_group
    rm = pid_m * BM + tl.arange(0, BM)
    n = pid_n * BN + tl.arange(0, BN)  # BN divides HALF: a tile never straddles two halves
    c1 = (n // HALF) * 2 * HALF + n % HALF
    c2 = c1 + HALF
    rk = tl.arange(0, BK)
    a_p = a_ptr + rm[:, None].to(tl.int64) * s_am + rk[None, :]
    w1_p = w_ptr + rk[:, None].to(tl.int64) * s_wk + c1[None, :]
    w2_p = w_ptr + rk[:, None].to(tl.int64) * s_wk + c2[None, :]
    acc1 = tl.zeros((BM, BN), dtype=tl.float32)
    acc2 = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        km = (k0 + rk) < K
        a = tl.load(a_p, mask=(rm[:, None] < M) & km[None, :], other=0.0)
        w1 = tl.load(w1_p, mask=km[:, None] & (n[None, :] < NP), other=0.0)
        w2 = tl.load(w2_p, mask=km[:, None] & (n[None, :] < NP), other=0.0)
        if INTERP:  # the interpreter's bf16 dot is wrong; bf16 products are exact in fp32
            a, w1, w2 = a.to(tl.float32), w1.to(tl.float32), w2.to(tl.float32)
            acc1 += tl.dot(a, w1, input_precision="ieee")
            acc2 += tl.dot(a, w2, input_precision="ieee")
        else:
            acc1 += tl.dot(a, w1)
            acc2 += tl.dot(a, w2)
        a_p += BK
        w1_p += BK * s_wk
        w2_p += BK * s_wk
    mask = (rm[:, None] < M) & (n[None, :] < NP)
    if EPI == 0:
        y = acc1 * tl.sigmoid(acc1) * acc2
        if INTERP:
            y = round_bf16(y)
        tl.store(o_ptr + rm[:, None].to(tl.int64) * s_om + n[None, :], y.to(o_ptr.dtype.element_ty), mask=mask)
    else:
        pos = tl.load(pos_ptr + rm, mask=rm < M, other=0).to(tl.int64)
        rot = (n < rot_pairs)[None, :]
        tab = pos[:, None] * s_tab + (n % HALF)[None, :]
        cs = tl.where(rot, tl.load(cos_ptr + tab, mask=mask & rot, other=1.0), 1.0)
        sn = tl.where(rot, tl.load(sin_ptr + tab, mask=mask & rot, other=0.0), 0.0)
        y1 = acc1 * cs - acc2 * sn
        y2 = acc2 * cs + acc1 * sn
        if INTERP:
            y1, y2 = round_bf16(y1), round_bf16(y2)
        o = o_ptr + rm[:, None].to(tl.int64) * s_om
        tl.store(o + c1[None, :], y1.to(o_ptr.dtype.element_ty), mask=mask)
        tl.store(o + c2[None, :], y2.to(o_ptr.dtype.element_ty), mask=mask)


def _config(m: int, half: int) -> dict:
    """Tile sizes by M (decode-sized M streams the weights with a short tile), BN dividing HALF."""
    bn = 64
    while half % bn and bn > 16:
        bn //= 2
    if m <= 64:
        return dict(BM=16, BN=bn, BK=128, num_warps=4, num_stages=4)
    return dict(BM=128, BN=bn, BK=64, num_warps=8, num_stages=4)


def _launch(out, a, w, half: int, epi: int, pos=None, cos=None, sin=None, rot_pairs: int = 0) -> None:
    m, k = a.shape
    np_ = w.shape[1] // 2
    cfg = _config(m, half)
    if half % cfg["BN"]:
        raise ValueError(f"HALF {half} is not a multiple of 16")
    grid = (triton.cdiv(m, cfg["BM"]) * triton.cdiv(np_, cfg["BN"]),)
    tab = cos if cos is not None else w
    _dual_gemm[grid](a, w, out, pos if pos is not None else a, tab, sin if sin is not None else w,
                     m, k, np_, half, rot_pairs, a.stride(0), w.stride(0), out.stride(0), tab.stride(0),
                     EPI=epi, GROUP_M=8, INTERP=interpreting(), **cfg)


def gemm_swiglu(out: torch.Tensor, a: torch.Tensor, w_gu: torch.Tensor) -> None:
    """out (M,I) = silu(a @ w_gu[:, :I]) * (a @ w_gu[:, I:]); a (M,K) bf16, w_gu (K,2I) bf16, unit column strides."""
    _launch(out, a, w_gu, w_gu.shape[1] // 2, SWIGLU)


def gemm_rope(out: torch.Tensor, a: torch.Tensor, w_qkv: torch.Tensor, pos: torch.Tensor, cos: torch.Tensor,
              sin: torch.Tensor, head_dim: int, rot_heads: int) -> None:
    """out (M,N) = a @ w_qkv with NeoX RoPE on the first rot_heads heads of head_dim (Q and K), the rest
    (V) as is; a (M,K) bf16, w_qkv (K,N) bf16, pos (M,) int, cos/sin (P, head_dim/2) fp32."""
    _launch(out, a, w_qkv, head_dim // 2, ROPE, pos, cos, sin, rot_heads * head_dim // 2)
