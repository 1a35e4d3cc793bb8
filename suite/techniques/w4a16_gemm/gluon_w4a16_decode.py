"""Decode-shaped W4A16 GEMM in Gluon (explicit layouts): each thread loads the packed words it needs
straight from global memory into the registers of the m16n8k16 B operand, no shared memory, DEPTH
blocks ahead, each load with the L2 evict_first policy (inline PTX: Triton's asynchronous copies
drop cache hints), unpacks them in place (the decode kernel's centred inline PTX: the two elements
of a register are K and K + 1 of one column, from two words) and issues mma.sync.

Weights in `packing.pack_k16`'s layout (K/8, N) int32; fp16 scales per 128-K group; M <= 16 (one
row tile, activations from global into the A operand's registers); split-K by fp32 atomics as the
Triton decode kernel. CUDA only (no interpreter for Gluon). An experiment (runners.studies.w4a16_protocol):
on the H200 1.06-1.4x slower than the Triton decode kernel at M = 1, more at M = 16."""
from __future__ import annotations

import torch
import triton
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.ampere import mma_v2

from suite.techniques.w4a16_gemm.triton_w4a16_decode import bucket, scratch

_LD_EVICT_FIRST: gl.constexpr = gl.constexpr(
    "{ .reg .b64 pol; createpolicy.fractional.L2::evict_first.b64 pol, 1.0; "
    "ld.global.L2::cache_hint.b32 $0, [$1], pol; }")
_LD_PLAIN: gl.constexpr = gl.constexpr("ld.global.b32 $0, [$1];")
# VEC: four words at the first of four addresses, one 16-byte load (`pack_k16t`'s order makes them
# the thread's four K of one column: 2q, 2q + 1, 2q + 8, 2q + 9).
_LD4_EVICT_FIRST: gl.constexpr = gl.constexpr(
    "{ .reg .b64 pol; createpolicy.fractional.L2::evict_first.b64 pol, 1.0; "
    "ld.global.L2::cache_hint.v4.b32 {$0, $1, $2, $3}, [$4], pol; }")
_LD4_PLAIN: gl.constexpr = gl.constexpr("ld.global.v4.b32 {$0, $1, $2, $3}, [$4];")
_UNPACK_CENTRED: gl.constexpr = gl.constexpr(
    "{ .reg .b32 t, b; prmt.b32 t, $1, $2, $3; shr.b32 t, t, $5; "
    "lop3.b32 t, t, 0x000F000F, 0x43004300, 0xEA; mov.b32 b, 0x43084308; sub.rn.bf16x2 $0, t, b; }")


@gluon.jit
def _load_words(ptrs, EVICT: gl.constexpr, VEC: gl.constexpr):
    """int32 at ptrs (in bounds), read with L2 evict_first when EVICT; VEC: 16 bytes per load."""
    if VEC:
        if EVICT:
            w = gl.inline_asm_elementwise(_LD4_EVICT_FIRST, "=r,=r,=r,=r,l,l,l,l", [ptrs], dtype=gl.int32,
                                          is_pure=True, pack=4)
        else:
            w = gl.inline_asm_elementwise(_LD4_PLAIN, "=r,=r,=r,=r,l,l,l,l", [ptrs], dtype=gl.int32,
                                          is_pure=True, pack=4)
    elif EVICT:
        w = gl.inline_asm_elementwise(_LD_EVICT_FIRST, "=r,l", [ptrs], dtype=gl.int32, is_pure=True, pack=1)
    else:
        w = gl.inline_asm_elementwise(_LD_PLAIN, "=r,l", [ptrs], dtype=gl.int32, is_pure=True, pack=1)
    return w


@gluon.jit
def _nibble(words, J: gl.constexpr):
    """bf16 q = c - 8 of nibble J of each word (same shape and layout)."""
    sel = gl.full(words.shape, (J // 2) * 0x1111 + 0x4400, gl.int32, layout=words.type.layout)
    shift = gl.full(words.shape, 4 * (J % 2), gl.int32, layout=words.type.layout)
    return gl.inline_asm_elementwise(_UNPACK_CENTRED, "=r,r,r,r,r,r,r", [words, sel, shift],
                                     dtype=gl.bfloat16, is_pure=True, pack=2)


@gluon.jit
def _block(p, words, a_ptrs, a_ok, k0, A_L: gl.constexpr):
    """p (16, BN) fp32 plus a[:, k0:k0+128] @ q (the 128-K block whose words are given)."""
    for j in gl.static_range(8):
        a_j = gl.load(a_ptrs + k0 + 16 * j, mask=a_ok, other=0.0)
        p = mma_v2(a_j, _nibble(words, j), p)
    return p


@gluon.jit(do_not_specialize=["M", "M_BUCKET"])
def gluon_decode_kernel(a_ptr, qw_ptr, s_ptr, c_ptr, ws_ptr, lock_ptr, M, N, K, sam, sqk, sqn, ssg, scm, M_BUCKET,
                        GROUP: gl.constexpr, BN: gl.constexpr, SPLIT_K: gl.constexpr, EVICT: gl.constexpr,
                        DEPTH: gl.constexpr, VEC: gl.constexpr = False):
    NW: gl.constexpr = gl.num_warps()
    MMA: gl.constexpr = gl.NVMMADistributedLayout(version=[2, 0], warps_per_cta=[1, NW], instr_shape=[16, 8])
    A_L: gl.constexpr = gl.DotOperandLayout(operand_index=0, parent=MMA, k_width=2)
    B_L: gl.constexpr = gl.DotOperandLayout(operand_index=1, parent=MMA, k_width=2)
    pid_n = gl.program_id(0)
    pid_k = gl.program_id(1)
    steps = K // 128
    per = gl.cdiv(steps, SPLIT_K)
    first = pid_k * per
    last = gl.minimum(first + per, steps)
    # words: (16, BN) in the B operand's layout, columns clamped into range (their results are masked)
    ri = gl.arange(0, 16, layout=gl.SliceLayout(1, B_L))
    rn_b = gl.minimum(pid_n * BN + gl.arange(0, BN, layout=gl.SliceLayout(0, B_L)), N - 1)
    if VEC:  # pack_k16t: a column's 16 words of a block contiguous, in the order of the MMA's K
        w_ptrs = qw_ptr + (4 * ((ri % 8) // 2) + ri % 2 + 2 * (ri // 8))[:, None] + rn_b[None, :] * sqn
        bstep = 16
    else:  # pack_k16: (K/8, N)
        w_ptrs = qw_ptr + ri[:, None] * sqk + rn_b[None, :]
        bstep = 16 * sqk
    ra = gl.arange(0, 16, layout=gl.SliceLayout(1, A_L))
    rk = gl.arange(0, 16, layout=gl.SliceLayout(0, A_L))
    a_ptrs = a_ptr + ra[:, None] * sam + rk[None, :]
    a_ok = (ra < M)[:, None] & (rk >= 0)[None, :]
    rn = pid_n * BN + gl.arange(0, BN, layout=gl.SliceLayout(0, MMA))
    n_ok = rn < N
    s_ptrs = s_ptr + rn
    acc = gl.zeros((16, BN), gl.float32, layout=MMA)
    # DEPTH blocks of words in flight: w0 is consumed, w1 (and w2) were issued one (two) steps earlier.
    # Past `last` the loads re-read the program's first block (in bounds, unused).
    w0 = _load_words(w_ptrs + first * bstep, EVICT, VEC)
    if DEPTH >= 2:
        w1 = _load_words(w_ptrs + gl.minimum(first + 1, last - 1) * bstep, EVICT, VEC)
    if DEPTH >= 3:
        w2 = _load_words(w_ptrs + gl.minimum(first + 2, last - 1) * bstep, EVICT, VEC)
    for blk in range(first, last):
        s = gl.load(s_ptrs + (blk * 128 // GROUP) * ssg, mask=n_ok, other=0.0).to(gl.float32)
        nxt = _load_words(w_ptrs + gl.minimum(blk + DEPTH, last - 1) * bstep, EVICT, VEC)
        p = _block(gl.zeros((16, BN), gl.float32, layout=MMA), w0, a_ptrs, a_ok, blk * 128, A_L)
        acc += p * s[None, :]
        if DEPTH == 1:
            w0 = nxt
        elif DEPTH == 2:
            w0 = w1
            w1 = nxt
        else:
            w0 = w1
            w1 = w2
            w2 = nxt
    rm = gl.arange(0, 16, layout=gl.SliceLayout(1, MMA))
    c_mask = (rm < M)[:, None] & n_ok[None, :]
    c_ptrs = c_ptr + rm[:, None] * scm + rn[None, :]
    if SPLIT_K == 1:
        gl.store(c_ptrs, acc.to(gl.bfloat16), mask=c_mask)
    else:
        ws_ptrs = ws_ptr + rm[:, None] * N + rn[None, :]
        gl.atomic_add(ws_ptrs, acc, mask=c_mask, sem="relaxed")
        gl.thread_barrier()  # every thread's adds are issued before the counter moves
        if gl.atomic_add(lock_ptr + pid_n, 1, sem="acq_rel") == SPLIT_K - 1:
            total = gl.load(ws_ptrs, mask=c_mask, other=0.0, cache_modifier=".cg")
            gl.store(c_ptrs, total.to(gl.bfloat16), mask=c_mask)
            gl.store(ws_ptrs, gl.zeros((16, BN), gl.float32, layout=MMA), mask=c_mask, cache_modifier=".cg")
            gl.atomic_xchg(lock_ptr + pid_n, 0)


def launch(out, a, qweight_k16, scales, BN: int = 128, SPLIT_K: int = 4, EVICT: bool = True, DEPTH: int = 2,
           num_warps: int = 4, VEC: bool = False) -> None:
    """out (M,N) bf16 = a (M,K) bf16 @ W^T, M <= 16; W (N,K) = int4 codes of qweight_k16 (K/8, N) int32
    (packing.pack_k16), or with VEC (N, K/8) in packing.pack_k16t's order, x scales (K/G, N) fp16,
    G % 128 == 0; K % 128 == 0."""
    m, k = a.shape
    n = scales.shape[1]
    group = k // scales.shape[0]
    assert m <= 16 and k % 128 == 0 and group % 128 == 0 and a.stride(1) == 1 and scales.stride(1) == 1
    assert qweight_k16.stride(1) == 1 and out.stride(1) == 1
    sqk, sqn = (1, qweight_k16.stride(0)) if VEC else (qweight_k16.stride(0), 1)
    ws, locks = scratch(m, n, a.device)
    grid = (triton.cdiv(n, BN), SPLIT_K)
    gluon_decode_kernel[grid](a, qweight_k16, scales, out, ws, locks, m, n, k, a.stride(0), sqk, sqn,
                              scales.stride(0), out.stride(0), bucket(m), GROUP=group, BN=BN, SPLIT_K=SPLIT_K,
                              EVICT=EVICT, DEPTH=DEPTH, VEC=VEC, num_warps=num_warps)


def run(out, a, qweight, scales, w_bf16=None, qweight_k16=None) -> None:
    """out (M,N) bf16 = a (M,K) bf16 @ dequant(qweight_k16, scales)^T (M <= 16)."""
    launch(out, a, qweight_k16, scales)
