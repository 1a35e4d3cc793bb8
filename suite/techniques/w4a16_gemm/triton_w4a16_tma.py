"""Decode-shaped W4A16 GEMM with the weights read by the Tensor Memory Accelerator: the decode
kernel's product (`triton_w4a16_decode`: interleaved packing, inline-PTX centred unpacking, split-K
by fp32 atomics) with the (16 words x BLOCK_N) weight tile and the block's scales each one TMA copy
into shared memory, STAGES blocks in flight per program; the (16 x 16) activation slices by
pipelined loads, or with A_TMA by TMA too (rows of `a` past M read as zeros; a barrier per copy:
twice the loop's instructions on sm_90). An experiment (runners.studies.w4a16_protocol): on the
H200 within 3% of the decode kernel. M <= 16 (one row tile); GROUP % 128 == 0."""
from __future__ import annotations

import torch
import triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor

from suite.lib.int4_triton import nibble_bf16, nibble_fp32
from suite.lib.interp import interpreting
from suite.techniques.w4a16_gemm.triton_w4a16_decode import bucket, finish, scratch


@triton.jit(do_not_specialize=["M", "M_BUCKET"])
def tma_kernel(a_desc, qw_desc, s_desc, a_ptr, c_ptr, ws_ptr, lock_ptr, M, N, K, sam, scm, scn, M_BUCKET,
               GROUP: tl.constexpr, BN: tl.constexpr, SPLIT_K: tl.constexpr, STAGES: tl.constexpr,
               UPCAST: tl.constexpr, WS: tl.constexpr = False, A_TMA: tl.constexpr = False):
    pid_n = tl.program_id(0)
    pid_k = tl.program_id(1)
    rn = pid_n * BN + tl.arange(0, BN)
    rm = tl.arange(0, 16)
    steps = K // 128
    per = tl.cdiv(steps, SPLIT_K)
    first, last = pid_k * per, tl.minimum((pid_k + 1) * per, steps)
    acc = tl.zeros((16, BN), dtype=tl.float32)
    for blk in tl.range(first, last, num_stages=STAGES, warp_specialize=WS):
        words = qw_desc.load([blk * 16, pid_n * BN])  # (16, BN) int32
        s = s_desc.load([blk * 128 // GROUP, pid_n * BN]).to(tl.float32)  # (1, BN)
        p = tl.zeros((16, BN), dtype=tl.float32)
        for j in tl.static_range(8):
            if A_TMA:
                a_j = a_desc.load([0, blk * 128 + 16 * j])  # (16, 16) bf16, rows >= M zero
            else:
                a_j = tl.load(a_ptr + rm[:, None] * sam + (blk * 128 + 16 * j + tl.arange(0, 16))[None, :],
                              mask=(rm < M)[:, None], other=0.0)
            if UPCAST:  # the interpreter: no inline PTX, and its bf16 dot is wrong
                p = tl.dot(a_j.to(tl.float32), nibble_fp32(words, j, True), acc=p, input_precision="ieee")
            else:
                p = tl.dot(a_j, nibble_bf16(words, j, True), acc=p)
        acc += p * s
    finish(acc, c_ptr, ws_ptr, lock_ptr, rm, rn, rm < M, rn < N, N, scm, scn, pid_n, SPLIT_K, 16, BN)


def launch(out, a, qweight_k16, scales, BN: int = 128, SPLIT_K: int = 4, STAGES: int = 4, WS: bool = False,
           A_TMA: bool = False, num_warps: int = 4) -> None:
    """out (M,N) bf16 = a (M,K) bf16 @ W^T, M <= 16; W (N,K) = int4 codes of qweight_k16 (K/8, N) int32
    (packing.pack_k16) x scales (K/G, N) fp16; K % 128 == 0, G % 128 == 0."""
    m, k = a.shape
    n = scales.shape[1]
    group = k // scales.shape[0]
    assert m <= 16 and k % 128 == 0 and group % 128 == 0, (m, k, group)
    interp_run = interpreting()
    ws, locks = scratch(m, n, a.device)
    dst = torch.empty(m, n, device=a.device, dtype=torch.float32) if interp_run else out
    descs = (TensorDescriptor.from_tensor(a, [16, 16]), TensorDescriptor.from_tensor(qweight_k16, [16, BN]),
             TensorDescriptor.from_tensor(scales, [1, BN]))
    grid = (triton.cdiv(n, BN), SPLIT_K)
    tma_kernel[grid](*descs, a, dst, ws, locks, m, n, k, a.stride(0), *dst.stride(), bucket(m), GROUP=group, BN=BN,
                     SPLIT_K=SPLIT_K, STAGES=STAGES, UPCAST=interp_run, WS=WS, A_TMA=A_TMA, num_warps=num_warps)
    if interp_run:
        out.copy_(dst)
