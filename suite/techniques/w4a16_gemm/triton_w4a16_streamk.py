"""Stream-K form of the decode kernel (`triton_w4a16_decode`, M <= 16): a fixed number of programs
(a multiple of the SM count) share the (column tile, 128-K block) work units evenly, each a
contiguous run that may end one tile and start the next, so that no wave of programs is left part
full (70B up with split-K 4: 896 programs for 528 resident slots, 1.7 waves).

Units u = tile * steps + block; program p takes [p * per, (p + 1) * per). A tile's partial sums go
to the fp32 workspace by atomics; the last of the programs that touched it (their count follows
from per) writes bf16 and zeroes its workspace and counter, as the split-K epilogue does."""
from __future__ import annotations

import torch
import triton
import triton.language as tl

from suite.lib.interp import interpreting
from suite.techniques.w4a16_gemm import triton_w4a16_decode as D
from suite.techniques.w4a16_gemm.triton_w4a16_decode import _block, bucket, finish, scratch


@triton.jit(do_not_specialize=["M", "M_BUCKET"])
def streamk_kernel(a_ptr, qw_ptr, s_ptr, c_ptr, ws_ptr, lock_ptr, M, N, K, sam, sak, sqk, sqn, ssg, ssn, scm, scn,
                   M_BUCKET, GROUP: tl.constexpr, BN: tl.constexpr, UPCAST: tl.constexpr, PROGRAMS: tl.constexpr = 0):
    pid = tl.program_id(0)
    steps = K // 128
    units = tl.cdiv(N, BN) * steps
    per = tl.cdiv(units, tl.num_programs(0))
    u = pid * per
    end = tl.minimum(u + per, units)
    rm = tl.arange(0, 16)
    m_ok = rm < M
    ri = tl.arange(0, 16)
    a_rows = a_ptr + rm[:, None] * sam
    while u < end:
        tile = u // steps
        first = u - tile * steps
        last = tl.minimum(end - tile * steps, steps)
        rn = tile * BN + tl.arange(0, BN)
        n_ok = rn < N
        s_row = s_ptr + rn * ssn
        qw_cols = qw_ptr + rn * sqn
        acc = tl.zeros((16, BN), dtype=tl.float32)
        s_next = tl.load(s_row + (first * 128 // GROUP) * ssg, mask=n_ok, other=0.0)  # scales one block ahead
        for blk in range(first, last):
            s_blk = s_next.to(tl.float32)
            s_next = tl.load(s_row + ((blk + 1) * 128 // GROUP) * ssg, mask=n_ok & (blk + 1 < last), other=0.0)
            words = tl.load(qw_cols[None, :] + (blk * 16 + ri)[:, None] * sqk, mask=n_ok[None, :], other=0)
            acc = _block(acc, words, a_rows, s_ptr, s_blk, blk, rn, n_ok, m_ok, ri, sak, ssg, ssn,
                         GROUP, 1, 16, 16, BN, UPCAST, not UPCAST, True)
        parts = (tile * steps + steps - 1) // per - (tile * steps) // per + 1  # programs sharing the tile
        finish(acc, c_ptr, ws_ptr, lock_ptr, rm, rn, m_ok, n_ok, N, scm, scn, tile, parts, 16, BN)
        u = tile * steps + last


def _cfg(programs: int, stages: int, maxnreg=None) -> triton.Config:
    return triton.Config({"BN": 128, "PROGRAMS": programs}, num_warps=4, num_stages=stages, maxnreg=maxnreg)


# 2, 3 or 4 programs per SM of the H200's 132 (160 registers a thread: 3 fit; 128 forced: 4).
CONFIGS = [_cfg(p, st) for p in (264, 396) for st in (3, 4)] + [_cfg(p, 3, 128) for p in (396, 528)]
INTERP = {"BN": 32, "PROGRAMS": 7}

tuned = triton.autotune(CONFIGS, key=["M_BUCKET", "N", "K", "GROUP"], do_bench=D._bench, cache_results=True)(streamk_kernel)


def launch(out, a, qweight_k16, scales, kernel=None, **config) -> None:
    """out (M,N) bf16 = a (M,K) bf16 @ W^T, M <= 16; W (N,K) = int4 codes of qweight_k16 (K/8, N) int32
    (packing.pack_k16) x scales (K/G, N) fp16, G % 128 == 0; K % 128 == 0. `kernel` the plain kernel
    with `config` (BN, PROGRAMS: the grid, num_warps, num_stages, maxnreg) given, or the autotuned one."""
    m, k = a.shape
    n = scales.shape[1]
    group = k // scales.shape[0]
    assert m <= 16 and k % 128 == 0 and group % 128 == 0, (m, k, group)
    interp_run = interpreting()
    if kernel is None:
        kernel, config = (streamk_kernel, INTERP) if interp_run else (tuned, {})
    ws, locks = scratch(m, n, a.device)
    dst = torch.empty(m, n, device=a.device, dtype=torch.float32) if interp_run else out
    grid = lambda meta: (min(meta["PROGRAMS"], triton.cdiv(n, meta["BN"]) * (k // 128)),)  # noqa: E731
    kernel[grid](a, qweight_k16, scales, dst, ws, locks, m, n, k, *a.stride(), *qweight_k16.stride(),
                 *scales.stride(), *dst.stride(), bucket(m), GROUP=group, UPCAST=interp_run, **config)
    if interp_run:
        out.copy_(dst)


def run(out, a, qweight, scales, w_bf16=None, qweight_k16=None) -> None:
    """out (M,N) bf16 = a (M,K) bf16 @ dequant(qweight_k16 (K/8,N) int32, scales (K/G,N) fp16)^T:
    stream-K up to M = 16 with 128-K groups, the split-K decode kernel otherwise."""
    m, k = a.shape
    if m <= 16 and (k // scales.shape[0]) % 128 == 0:
        launch(out, a, qweight_k16, scales)
    else:
        D.launch(out, a, qweight_k16, scales)
