"""A bf16 Triton GEMM whose tile traversal order (program id -> output tile) is a parameter."""
from __future__ import annotations

import torch
import triton
import triton.language as tl

from suite.lib.interp import interpreting

ORDERS = {"row_major": 0, "grouped": 1, "morton": 2}


@triton.jit
def _tile(pid, grid_m, grid_n, ORDER: tl.constexpr, GROUP_M: tl.constexpr, LOG2_SIDE: tl.constexpr):
    if ORDER == 0:  # row-major: consecutive programs walk along a row of output tiles
        pid_m = pid // grid_n
        pid_n = pid % grid_n
    elif ORDER == 1:  # grouped: GROUP_M rows at a time, column by column (Triton tutorial order)
        per_group = GROUP_M * grid_n
        first_m = (pid // per_group) * GROUP_M
        rows = tl.minimum(grid_m - first_m, GROUP_M)
        pid_m = first_m + (pid % per_group) % rows
        pid_n = (pid % per_group) // rows
    else:  # Morton: even bits of pid give the column, odd bits the row
        pid_m = pid * 0
        pid_n = pid * 0
        for i in tl.static_range(LOG2_SIDE):
            pid_n |= ((pid >> (2 * i)) & 1) << i
            pid_m |= ((pid >> (2 * i + 1)) & 1) << i
    return pid_m, pid_n


@triton.jit
def tiled_gemm(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn,
               ORDER: tl.constexpr, GROUP_M: tl.constexpr, LOG2_SIDE: tl.constexpr,
               BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, UPCAST: tl.constexpr):
    grid_m = tl.cdiv(M, BM)
    grid_n = tl.cdiv(N, BN)
    pid_m, pid_n = _tile(tl.program_id(0), grid_m, grid_n, ORDER, GROUP_M, LOG2_SIDE)
    if (pid_m < grid_m) & (pid_n < grid_n):
        rm = pid_m * BM + tl.arange(0, BM)
        rn = pid_n * BN + tl.arange(0, BN)
        rk = tl.arange(0, BK)
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for kt in range(0, tl.cdiv(K, BK)):
            kk = kt * BK + rk
            a = tl.load(a_ptr + rm[:, None] * sam + kk[None, :] * sak,
                        mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0)
            b = tl.load(b_ptr + kk[:, None] * sbk + rn[None, :] * sbn,
                        mask=(kk[:, None] < K) & (rn[None, :] < N), other=0.0)
            if UPCAST:  # the interpreter's bf16 dot is wrong; bf16 products are exact in fp32
                acc += tl.dot(a.to(tl.float32), b.to(tl.float32), input_precision="ieee")
            else:
                acc += tl.dot(a, b)
        tl.store(c_ptr + rm[:, None] * scm + rn[None, :] * scn, acc,
                 mask=(rm[:, None] < M) & (rn[None, :] < N))


def gemm(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor, order: str, interp: bool) -> None:
    """out (M,N) bf16 = a (M,K) bf16 @ b (K,N) bf16, tiles visited in `order`."""
    m, k = a.shape
    n = b.shape[1]
    bm, bn, bk, warps, stages = (32, 32, 32, 4, 1) if interp else (128, 128, 64, 8, 3)
    gm, gn = triton.cdiv(m, bm), triton.cdiv(n, bn)
    log2_side = max(gm, gn, 1).bit_length() - (1 if max(gm, gn) & (max(gm, gn) - 1) == 0 else 0)
    # Morton visits a 2^L x 2^L square of tiles; out-of-range tiles exit at once.
    programs = (1 << (2 * log2_side)) if order == "morton" else gm * gn
    # fp32 scratch, rounded by torch: the interpreter's fp32 -> bf16 store truncates.
    dst = torch.empty(m, n, device=a.device, dtype=torch.float32) if interp else out
    tiled_gemm[(programs,)](a, b, dst, m, n, k, *a.stride(), *b.stride(), *dst.stride(),
                            ORDER=ORDERS[order], GROUP_M=8, LOG2_SIDE=log2_side, BM=bm, BN=bn,
                            BK=bk, UPCAST=interp, num_warps=warps, num_stages=stages)
    if interp:
        out.copy_(dst)


def run(out: torch.Tensor, a: torch.Tensor, b: torch.Tensor, order: str) -> None:
    """out (M,N) bf16 = a (M,K) bf16 @ b (K,N) bf16, output tiles visited in `order`."""
    gemm(a, b, out, order, interpreting())
