"""Triton block-sparse attention forward: exact causal attention over the selected KV blocks only.

One program per (batch x query head, query block); it reads its GQA group's index list
(kv_num_blocks / kv_indices, see common.py) and runs an online softmax over those blocks.
"""
from __future__ import annotations

import math

import torch
import triton
import triton.language as tl

from suite.lib.interp import interpreting
from suite.lib.triton_round import round_bf16


@triton.jit
def _attend(q, acc, m_i, l_i, K, V, kv_base_k, kv_base_v, kb, offs_n, offs_d, q_pos,
            skn, skd, svn, svd, qk_scale, BLOCK: tl.constexpr, MASKED: tl.constexpr,
            UPCAST: tl.constexpr):
    k_pos = kb * BLOCK + offs_n
    kt = tl.load(K + kv_base_k + k_pos[None, :] * skn + offs_d[:, None] * skd)  # (D, BLOCK)
    v = tl.load(V + kv_base_v + k_pos[:, None] * svn + offs_d[None, :] * svd)  # (BLOCK, D)
    if UPCAST:  # the interpreter's bf16 dot is wrong; bf16 products are exact in fp32
        kt = kt.to(tl.float32)
        v = v.to(tl.float32)
        qk = tl.dot(q, kt, input_precision="ieee")
    else:
        qk = tl.dot(q, kt)
    qk = qk * qk_scale  # log2 units
    if MASKED:
        qk = tl.where(k_pos[None, :] <= q_pos[:, None], qk, float("-inf"))
    m_new = tl.maximum(m_i, tl.max(qk, 1))
    alpha = tl.math.exp2(m_i - m_new)
    p = tl.math.exp2(qk - m_new[:, None])
    l_i = l_i * alpha + tl.sum(p, 1)
    acc = acc * alpha[:, None]
    if UPCAST:
        acc += tl.dot(round_bf16(p), v, input_precision="ieee")
    else:
        acc += tl.dot(p.to(v.dtype), v)
    return acc, m_new, l_i


def _configs() -> list[triton.Config]:
    if interpreting():
        return [triton.Config({}, num_warps=4, num_stages=1)]
    return [triton.Config({}, num_warps=w, num_stages=st) for w in (4, 8) for st in (2, 3)]


@triton.autotune(configs=_configs(), key=["BLOCK", "HEAD_DIM", "N_Q_BLOCKS"])
@triton.jit
def block_sparse_fwd(Q, K, V, O, NUM, IDX,
                     sqb, sqh, sqm, sqd, skb, skh, skn, skd, svb, svh, svn, svd,
                     sob, soh, som, sod, snb, snh, snm, sib, sih, sim, sik,
                     H_Q, GROUP, N_Q_BLOCKS, Q_BLOCK_OFF, qk_scale,
                     BLOCK: tl.constexpr, HEAD_DIM: tl.constexpr, UPCAST: tl.constexpr):
    # Heads vary fastest, so the heads of a GQA group (same KV blocks) run side by side and
    # share K/V through L2; the heaviest (last) query blocks start first.
    pid_bh = tl.program_id(0)
    pid_m = N_Q_BLOCKS - 1 - tl.program_id(1)
    b = pid_bh // H_Q
    h = pid_bh % H_Q
    g = h // GROUP
    offs_m = pid_m * BLOCK + tl.arange(0, BLOCK)
    offs_n = tl.arange(0, BLOCK)
    offs_d = tl.arange(0, HEAD_DIM)
    q_pos = (pid_m + Q_BLOCK_OFF) * BLOCK + tl.arange(0, BLOCK)  # absolute positions
    q = tl.load(Q + b * sqb + h * sqh + offs_m[:, None] * sqm + offs_d[None, :] * sqd)
    if UPCAST:
        q = q.to(tl.float32)
    kv_base_k = b * skb + g * skh
    kv_base_v = b * svb + g * svh
    cnt = tl.load(NUM + b * snb + g * snh + pid_m * snm)
    idx_ptr = IDX + b * sib + g * sih + pid_m * sim
    m_i = tl.full([BLOCK], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK], dtype=tl.float32)
    acc = tl.zeros([BLOCK, HEAD_DIM], dtype=tl.float32)
    # Every selected block but the last lies strictly before the diagonal: no mask needed.
    for j in range(0, cnt - 1):
        kb = tl.load(idx_ptr + j * sik)
        acc, m_i, l_i = _attend(q, acc, m_i, l_i, K, V, kv_base_k, kv_base_v, kb, offs_n, offs_d,
                                q_pos, skn, skd, svn, svd, qk_scale, BLOCK, False, UPCAST)
    kb = tl.load(idx_ptr + (cnt - 1) * sik)
    acc, m_i, l_i = _attend(q, acc, m_i, l_i, K, V, kv_base_k, kv_base_v, kb, offs_n, offs_d,
                            q_pos, skn, skd, svn, svd, qk_scale, BLOCK, True, UPCAST)
    acc = acc / l_i[:, None]
    tl.store(O + b * sob + h * soh + offs_m[:, None] * som + offs_d[None, :] * sod,
             acc.to(O.dtype.element_ty))


def block_sparse_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, num: torch.Tensor,
                           idx: torch.Tensor, block: int, out: torch.Tensor | None = None) -> torch.Tensor:
    """q (B,Hq,Sq,D) bf16, k/v (B,Hkv,Sk,D) bf16, num (B,Hkv,nQB) int32, idx (B,Hkv,nQB,nKB) int32
    -> out (B,Hq,Sq,D) bf16: causal attention over the selected blocks; queries are the last Sq."""
    bsz, hq, sq, d = q.shape
    hkv, sk = k.shape[1], k.shape[2]
    assert sq % block == 0 and sk % block == 0 and hq % hkv == 0
    if out is None:
        out = torch.empty_like(q)
    interp = interpreting()
    # The interpreter truncates fp32 -> bf16 on store: store fp32 and let torch round.
    dst = torch.empty(out.shape, dtype=torch.float32, device=out.device) if interp else out
    nq, nk = sq // block, sk // block
    grid = (bsz * hq, nq)
    block_sparse_fwd[grid](
        q, k, v, dst, num, idx, *q.stride(), *k.stride(), *v.stride(), *dst.stride(),
        *num.stride(), *idx.stride(), hq, hq // hkv, nq, nk - nq,
        (1.0 / math.sqrt(d)) * 1.4426950408889634,
        BLOCK=block, HEAD_DIM=d, UPCAST=interp)
    if interp:
        out.copy_(dst)
    return out
