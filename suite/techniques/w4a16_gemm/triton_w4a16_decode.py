"""Decode-shaped W4A16 GEMM in Triton (M <= 16 is weight streaming): out (M,N) bf16 = a (M,K) bf16
@ (q * s)^T with the int4 weights (8 per int32) unpacked in registers, never reshaped.

Each program streams a (16 words x BLOCK_N) tile of packed weights per 128-K block, split-K across
programs so that every SM streams. Shifting the tile by 4 j gives the (16, BN) weights of 16 K
(`packing.py`: contiguous K in the interleaved layout, K = 8 i + j in `pack_k`'s; the activations
are loaded to match, so either layout works, no weight is moved between threads), fed to eight
tl.dot of K = 16 (M padded to 16). The nibble c becomes a bf16 with no conversion instruction:
- ASM (`suite.lib.int4_triton.nibble_bf16`): inline PTX makes two weights per register, prmt +
  lop3 (+ shr for odd nibbles); CENTRED also subtracts 136 in bf16x2, so the weights are q itself
  and the block's product times the group scale is added to the accumulator;
- otherwise 128 + c by one or (bit pattern 0x4300 | c) per weight, and the product is corrected by
  136 rowsum(a) before the scale (q = c - 8; products exact; a 128-K block never straddles a group
  when GROUP % 128 == 0).
Split-K partials are fp32 atomic adds into a zeroed workspace; the last program of a tile (a
counter) writes bf16 and zeroes the workspace and the counter for the next call: one launch.
PF_DIST > 0 adds an L2 prefetch of the words PF_DIST blocks ahead with the evict_first policy: 1.2-1.5x
slower on the H200 (runners.studies.w4a16_protocol), kept for that study."""
from __future__ import annotations

import torch
import triton
import triton.language as tl

from suite.lib.int4_triton import bias_bf16, nibble_bf16, nibble_fp32, prefetch_evict_first
from suite.lib.interp import interpreting
from suite.lib.triton_round import round_bf16


@triton.jit
def _prefetch(qw_ptr, blk, pid_n, N, sqk, ok, BN: tl.constexpr):
    """L2 prefetch, evict_first, of the (16 words x BN) tile of block blk in 64-byte pieces."""
    e = tl.arange(0, BN)  # BN / 16 pieces per row of BN words
    row, col = e // (BN // 16), (e % (BN // 16)) * 16 + pid_n * BN
    prefetch_evict_first(qw_ptr + (blk * 16 + row) * sqk + col, ok & (col < N))


@triton.jit
def _block(acc, words, a_rows, s_ptr, s, blk, rn, n_ok, m_ok, ri, sak, ssg, ssn,
           GROUP: tl.constexpr, PI: tl.constexpr, PJ: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr,
           UPCAST: tl.constexpr, ASM: tl.constexpr, CENTRED: tl.constexpr):
    """acc (BM, BN) fp32 plus the product of the 128-K block `blk`: words (16, BN) int32 its packed
    weights; s (BN,) fp32 the block's scales when GROUP % 128 == 0."""
    tl.static_assert(ASM or UPCAST or not CENTRED, "centred weights come from the inline-PTX unpacking")
    k0 = blk * 128
    if GROUP % 128 == 0:
        p = tl.zeros((BM, BN), dtype=tl.float32)
        for j in tl.static_range(8):
            a_j = tl.load(a_rows + (k0 + ri * PI + j * PJ)[None, :] * sak, mask=m_ok[:, None], other=0.0)
            if UPCAST:  # the interpreter's bf16 dot is wrong; these products are exact in fp32
                a_j, w_j = a_j.to(tl.float32), nibble_fp32(words, j, CENTRED)
            elif ASM:
                w_j = nibble_bf16(words, j, CENTRED)
            else:
                w_j = bias_bf16((words >> (4 * j)) & 0xF)
            if UPCAST:
                p = tl.dot(a_j, w_j, acc=p, input_precision="ieee")
            else:
                p = tl.dot(a_j, w_j, acc=p)
        if CENTRED:  # the weights were q itself
            acc += p * s[None, :]
        else:  # the weights were q + 136: minus 136 rowsum(a) over the block
            a_blk = tl.load(a_rows + (k0 + tl.arange(0, 128))[None, :] * sak, mask=m_ok[:, None], other=0.0)
            acc += (p - 136.0 * tl.sum(a_blk.to(tl.float32), 1)[:, None]) * s[None, :]
    else:  # groups inside a block (GROUP < 128): q * s rounded to bf16 per weight, as unfused
        for j in tl.static_range(8):
            kk = k0 + ri * PI + j * PJ
            a_j = tl.load(a_rows + kk[None, :] * sak, mask=m_ok[:, None], other=0.0)
            s2 = tl.load(s_ptr + (kk // GROUP)[:, None] * ssg + rn[None, :] * ssn,
                         mask=n_ok[None, :], other=0.0).to(tl.float32)
            w = (((words >> (4 * j)) & 0xF) - 8).to(tl.float32) * s2
            if UPCAST:
                acc = tl.dot(a_j.to(tl.float32), round_bf16(w), acc=acc, input_precision="ieee")
            else:
                acc = tl.dot(a_j, w.to(tl.bfloat16), acc=acc)
    return acc


@triton.jit(do_not_specialize=["M", "M_BUCKET"])
def decode_kernel(a_ptr, qw_ptr, s_ptr, c_ptr, ws_ptr, lock_ptr, M, N, K,
                  sam, sak, sqk, sqn, ssg, ssn, scm, scn, M_BUCKET,
                  GROUP: tl.constexpr, PI: tl.constexpr, PJ: tl.constexpr, BM: tl.constexpr,
                  BN: tl.constexpr, SPLIT_K: tl.constexpr, UPCAST: tl.constexpr, ASM: tl.constexpr = False,
                  CENTRED: tl.constexpr = False, PREFETCH: tl.constexpr = False, PF_DIST: tl.constexpr = 0):
    pid_n = tl.program_id(0)
    pid_k = tl.program_id(1)
    pid_m = tl.program_id(2)
    rn = pid_n * BN + tl.arange(0, BN)
    rm = pid_m * BM + tl.arange(0, BM)
    ri = tl.arange(0, 16)
    n_ok = rn < N
    m_ok = rm < M
    steps = K // 128
    per = tl.cdiv(steps, SPLIT_K)
    first, last = pid_k * per, tl.minimum((pid_k + 1) * per, steps)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    a_rows = a_ptr + rm[:, None] * sam
    s_row = s_ptr + rn * ssn
    qw_cols = qw_ptr + rn * sqn
    # The scales (2 bytes per column and block) are too small for the asynchronous copies that
    # prefetch the words and activations; PREFETCH loads them one block ahead instead.
    s_next = tl.load(s_row + (first * 128 // GROUP) * ssg, mask=n_ok & (first < last), other=0.0)
    if PF_DIST > 0 and not UPCAST:  # the first PF_DIST blocks' words into the L2, evict_first
        for d in tl.static_range(PF_DIST):
            _prefetch(qw_ptr, first + d, pid_n, N, sqk, first + d < last, BN)
    for blk in range(first, last):
        if PREFETCH:
            s_blk = s_next.to(tl.float32)
            s_next = tl.load(s_row + ((blk + 1) * 128 // GROUP) * ssg, mask=n_ok & (blk + 1 < last), other=0.0)
        else:
            s_blk = tl.load(s_row + (blk * 128 // GROUP) * ssg, mask=n_ok, other=0.0).to(tl.float32)
        if PF_DIST > 0 and not UPCAST:
            _prefetch(qw_ptr, blk + PF_DIST, pid_n, N, sqk, blk + PF_DIST < last, BN)
        words = tl.load(qw_cols[None, :] + (blk * 16 + ri)[:, None] * sqk, mask=n_ok[None, :], other=0)
        acc = _block(acc, words, a_rows, s_ptr, s_blk, blk, rn, n_ok, m_ok, ri, sak, ssg, ssn,
                     GROUP, PI, PJ, BM, BN, UPCAST, ASM, CENTRED)
    finish(acc, c_ptr, ws_ptr, lock_ptr, rm, rn, m_ok, n_ok, N, scm, scn, pid_m * tl.num_programs(0) + pid_n,
           SPLIT_K, BM, BN)


@triton.jit
def finish(acc, c_ptr, ws_ptr, lock_ptr, rm, rn, m_ok, n_ok, N, scm, scn, tile, parts,
           BM: tl.constexpr, BN: tl.constexpr):
    """Writes acc (BM, BN) fp32 to out (rows rm, columns rn) as bf16; when `parts` programs (a
    constexpr or not) share the output tile `tile`, adds it to the fp32 workspace and the last of them
    writes the sum and zeroes workspace and counter."""
    c_mask = m_ok[:, None] & n_ok[None, :]
    c_ptrs = c_ptr + rm[:, None] * scm + rn[None, :] * scn
    if parts == 1:
        tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=c_mask)
    else:
        ws_ptrs = ws_ptr + rm[:, None] * N + rn[None, :]
        tl.atomic_add(ws_ptrs, acc, mask=c_mask, sem="relaxed")
        tl.debug_barrier()  # every thread's adds are issued before the counter moves
        if tl.atomic_add(lock_ptr + tile, 1, sem="acq_rel") == parts - 1:
            total = tl.load(ws_ptrs, mask=c_mask, other=0.0, cache_modifier=".cg")
            tl.store(c_ptrs, total.to(c_ptr.dtype.element_ty), mask=c_mask)
            tl.store(ws_ptrs, tl.zeros((BM, BN), dtype=tl.float32), mask=c_mask, cache_modifier=".cg")
            tl.atomic_xchg(lock_ptr + tile, 0)


def _cfg(bm, bn, split, warps, stages, **opts) -> triton.Config:
    return triton.Config({"BM": bm, "BN": bn, "SPLIT_K": split, **opts}, num_warps=warps, num_stages=stages)


FAST = {"ASM": True, "CENTRED": True, "PREFETCH": True}
# (BN, SPLIT_K, warps, stages): tile width against programs in flight; split-K fills 132 SMs where
# N / BN alone does not (N = 4096: 32 tiles of 128).
# BN = 256 left out: on the H200 it gave wrong sums now and then (70B up, 8B up; rel. error 0.05-0.1
# at 26c883b and 34ee83a), the split-K epilogue's counter apparently seen before every partial sum.
SMALL_M = [(64, 4, 4, 3), (64, 8, 4, 3), (128, 4, 4, 3), (128, 8, 4, 3), (128, 16, 4, 3)]
CONFIGS = ([_cfg(16, *c, **FAST) for c in SMALL_M]
           + [_cfg(64, bn, sp, w, st, **FAST) for bn, sp, w, st in ((64, 4, 4, 3), (128, 2, 4, 3), (128, 1, 8, 3))])
INTERP = {"BM": 16, "BN": 32, "SPLIT_K": 2, **FAST}  # no autotuning under the interpreter (ASM: shifts there)


def bucket(m: int) -> int:
    """The autotuning key's M: 1, 16 (M <= 16), 64 (larger)."""
    return 1 if m == 1 else (16 if m <= 16 else 64)


def _prune(configs, named_args, **kwargs):
    """BM = 16 up to M = 16, 64 beyond."""
    b = {**named_args, **kwargs}["M_BUCKET"]
    return [c for c in configs if (c.kwargs["BM"] == 16) == (b <= 16)] or configs


def _bench(fn, quantiles):
    """Shorter than Triton's default (25 + 100 ms per config): the runner re-measures the winner."""
    return triton.testing.do_bench(fn, warmup=10, rep=40, quantiles=quantiles)


# cache_results: the choice is kept on disk per key, so every case process of a run reuses it.
tuned = triton.autotune(CONFIGS, key=["M_BUCKET", "N", "K", "GROUP", "PI"], do_bench=_bench, cache_results=True,
                        prune_configs_by={"early_config_prune": _prune})(decode_kernel)

_SCRATCH: dict[tuple, tuple[torch.Tensor, torch.Tensor]] = {}


def scratch(m: int, n: int, device) -> tuple[torch.Tensor, torch.Tensor]:
    """fp32 (M,N) split-K workspace and int32 per-tile counters, both zero between calls, kept per
    shape so that a call allocates nothing (and can be captured in a CUDA graph)."""
    key = (str(device), m, n)
    if key not in _SCRATCH:
        _SCRATCH[key] = (torch.zeros(m, n, device=device, dtype=torch.float32),
                         torch.zeros(m * triton.cdiv(n, 32) + 1, device=device, dtype=torch.int32))
    return _SCRATCH[key]


def launch(out, a, qweight, scales, layout: str = "k16", kernel=None, **config) -> None:
    """out (M,N) bf16 = a (M,K) bf16 @ W^T; W (N,K) = int4 codes of qweight (K/8, N) int32 in
    `layout` ("k16": packing.pack_k16, "k8": int4.pack_k) x scales (K/G, N) fp16; K % 128 == 0.
    `kernel` the plain kernel with `config` given, or the autotuned one."""
    m, k = a.shape
    n = scales.shape[1]
    group = k // scales.shape[0]
    assert k % 128 == 0 and (group % 128 == 0 or 128 % group == 0), (k, group)
    pi, pj = (8, 1) if layout == "k8" else (1, 16)
    interp_run = interpreting()
    if kernel is None:
        kernel, config = (decode_kernel, INTERP) if interp_run else (tuned, {})
    ws, locks = scratch(m, n, a.device)
    # fp32 scratch under the interpreter, rounded by torch: its fp32 -> bf16 store truncates.
    dst = torch.empty(m, n, device=a.device, dtype=torch.float32) if interp_run else out
    grid = lambda meta: (triton.cdiv(n, meta["BN"]), meta["SPLIT_K"], triton.cdiv(m, meta["BM"]))
    kernel[grid](a, qweight, scales, dst, ws, locks, m, n, k, *a.stride(), *qweight.stride(),
                 *scales.stride(), *dst.stride(), bucket(m), GROUP=group, PI=pi, PJ=pj,
                 UPCAST=interp_run, **config)
    if interp_run:
        out.copy_(dst)


def run(out, a, qweight, scales, w_bf16=None, qweight_k16=None) -> None:
    """out (M,N) bf16 = a (M,K) bf16 @ dequant(qweight_k16 (K/8,N) int32, scales (K/G,N) fp16)^T."""
    launch(out, a, qweight_k16, scales)
