"""The MSA-style index selector (selectors.msa_index) as three Triton kernels.

1. `_query_index`: per (GQA group, query block) the mean query over the group's heads and the
   block's tokens, through the group's (D, R) projection -> qp (B,Hkv,nQB,R) fp32.
2. `_block_scores`: per (GQA group, KV block j) the block's keys through the projection (once),
   then for every later query block m: max over the block's tokens of qp[m] . kp[t]
   -> scores (B,Hkv,nQB,nKB) fp32, written only where KV block j lies strictly before m's diagonal.
3. `_topk_rows`: per (GQA group, query block) the diagonal, then the best counts[m]-1 earlier
   blocks, in the kv_num_blocks / kv_indices layout of block_sparse.py (ties to the lower index,
   as topk_blocks' stable sort breaks them).

The token-level score matrix (nQB x Sk per group) never reaches memory, and only the causal
half of it is computed; the torch selector materialises all of it.
"""
from __future__ import annotations

import torch
import triton
import triton.language as tl

from suite.lib.block_sparse import budget_counts
from suite.lib.interp import interpreting


@triton.jit
def _query_index(Q, W, QP, sqb, sqh, sqm, sqd, swh, swd, swr, spb, sph, spm, spr,
                 HKV, GROUP: tl.constexpr, BLOCK: tl.constexpr, D: tl.constexpr, R: tl.constexpr):
    pid_bh = tl.program_id(0)
    m = tl.program_id(1)
    b = pid_bh // HKV
    g = pid_bh % HKV
    offs_t = m * BLOCK + tl.arange(0, BLOCK)
    offs_d = tl.arange(0, D)
    acc = tl.zeros([D], dtype=tl.float32)
    for i in range(GROUP):
        ptr = Q + b * sqb + (g * GROUP + i) * sqh + offs_t[:, None] * sqm + offs_d[None, :] * sqd
        acc += tl.sum(tl.load(ptr).to(tl.float32), axis=0)
    qbar = acc / (GROUP * BLOCK)
    offs_r = tl.arange(0, R)
    w = tl.load(W + g * swh + offs_d[:, None] * swd + offs_r[None, :] * swr)  # (D, R)
    qp = tl.sum(qbar[:, None] * w, axis=0)
    tl.store(QP + b * spb + g * sph + m * spm + offs_r * spr, qp)


@triton.jit
def _block_scores(K, W, QP, S, skb, skh, skn, skd, swh, swd, swr, spb, sph, spm, spr,
                  ssb, ssh, ssm, ssn, HKV, N_Q, Q_BLOCK_OFF,
                  BLOCK: tl.constexpr, D: tl.constexpr, R: tl.constexpr, BM: tl.constexpr,
                  DC: tl.constexpr, PRECISION: tl.constexpr):
    # Groups vary fastest, KV blocks in order: block 0 has the most later query blocks, so the
    # heaviest programs start first.
    pid_bh = tl.program_id(0)
    j = tl.program_id(1)
    b = pid_bh // HKV
    g = pid_bh % HKV
    offs_t = j * BLOCK + tl.arange(0, BLOCK)
    offs_c = tl.arange(0, DC)
    offs_r = tl.arange(0, R)
    kp = tl.zeros([BLOCK, R], dtype=tl.float32)
    for c in range(0, D, DC):  # the block's keys through the projection, DC channels at a time
        kt = tl.load(K + b * skb + g * skh + offs_t[:, None] * skn + (c + offs_c[None, :]) * skd)
        w = tl.load(W + g * swh + (c + offs_c[:, None]) * swd + offs_r[None, :] * swr)
        kp += tl.dot(kt.to(tl.float32), w, input_precision=PRECISION)
    kp_t = tl.trans(kp)  # (R, BLOCK)
    # Query block m sees KV block j strictly before its diagonal when m + Q_BLOCK_OFF > j.
    m0 = tl.maximum(j - Q_BLOCK_OFF + 1, 0)
    for ms in range(m0, N_Q, BM):
        offs_m = ms + tl.arange(0, BM)
        live = offs_m < N_Q
        qp = tl.load(QP + b * spb + g * sph + offs_m[:, None] * spm + offs_r[None, :] * spr,
                     mask=live[:, None], other=0.0)
        best = tl.max(tl.dot(qp, kp_t, input_precision=PRECISION), axis=1)
        tl.store(S + b * ssb + g * ssh + offs_m * ssm + j * ssn, best, mask=live)


@triton.jit
def _topk_rows(S, COUNTS, NUM, IDX, ssb, ssh, ssm, ssn, snb, snh, snm, sib, sih, sim, sik,
               HKV, N_KV, Q_BLOCK_OFF, NK_P2: tl.constexpr):
    pid_bh = tl.program_id(0)
    m = tl.program_id(1)
    b = pid_bh // HKV
    g = pid_bh % HKV
    diag = m + Q_BLOCK_OFF
    j = tl.arange(0, NK_P2)
    s = tl.load(S + b * ssb + g * ssh + m * ssm + j * ssn, mask=j < diag, other=float("-inf"))
    s = tl.where(j == diag, float("inf"), s)
    count = tl.load(COUNTS + m).to(tl.int32)
    # The count-th largest score, then ties at it go to the lowest indices (a stable sort's order).
    ranked = tl.sort(s, descending=True)
    thr = tl.max(tl.where(j == count - 1, ranked, float("-inf")), axis=0)
    above = s > thr
    tie = (s == thr).to(tl.int32)
    chosen = above | ((tie > 0) & (tl.cumsum(tie, axis=0) <= count - tl.sum(above.to(tl.int32), axis=0)))
    chosen = chosen & (j < N_KV)
    # Chosen blocks ascending first (the diagonal, the largest, last), then the others ascending.
    n_chosen = tl.sum(chosen.to(tl.int32), axis=0)
    pos = tl.where(chosen, tl.cumsum(chosen.to(tl.int32), axis=0) - 1,
                   n_chosen + tl.cumsum((chosen == 0).to(tl.int32), axis=0) - 1)
    tl.store(IDX + b * sib + g * sih + m * sim + pos * sik, j, mask=j < N_KV)
    tl.store(NUM + b * snb + g * snh + m * snm, n_chosen)


_COUNTS: dict = {}


def _counts(nq: int, nk: int, density: float, device) -> torch.Tensor:
    key = (nq, nk, density, str(device))
    if key not in _COUNTS:
        _COUNTS[key] = budget_counts(nq, nk, density, device).to(torch.int32)
    return _COUNTS[key]


def msa_index_scores(q: torch.Tensor, k: torch.Tensor, w: torch.Tensor, block: int,
                     precision: str = "ieee", bm: int = 64) -> torch.Tensor:
    """q (B,Hq,Sq,D) bf16, k (B,Hkv,Sk,D) bf16, w (Hkv,D,R) fp32 -> block scores (B,Hkv,nQB,nKB)
    fp32, valid only before each query block's diagonal (elsewhere unwritten). precision: the dots'
    ("ieee", fp32 as the torch selector computes; "tf32x3" or "tf32"), ieee under the interpreter."""
    bsz, hq, sq, d = q.shape
    hkv, sk, r = k.shape[1], k.shape[2], w.shape[2]
    nq, nk = sq // block, sk // block
    w = w.float().contiguous()
    qp = torch.empty(bsz, hkv, nq, r, dtype=torch.float32, device=q.device)
    _query_index[(bsz * hkv, nq)](q, w, qp, *q.stride(), *w.stride(), *qp.stride(), hkv,
                                  GROUP=hq // hkv, BLOCK=block, D=d, R=r)
    scores = torch.empty(bsz, hkv, nq, nk, dtype=torch.float32, device=q.device)
    prec = "ieee" if interpreting() else precision
    _block_scores[(bsz * hkv, nk)](k, w, qp, scores, *k.stride(), *w.stride(), *qp.stride(),
                                   *scores.stride(), hkv, nq, nk - nq, BLOCK=block, D=d, R=r,
                                   BM=bm, DC=min(d, 32), PRECISION=prec)
    return scores


def topk_rows(scores: torch.Tensor, density: float) -> tuple[torch.Tensor, torch.Tensor]:
    """Block scores (B,H,nQB,nKB) fp32 (read before the diagonal only) -> (kv_num_blocks (B,H,nQB),
    kv_indices (B,H,nQB,nKB)) int32: the same selection as block_sparse.topk_blocks."""
    bsz, h, nq, nk = scores.shape
    num = torch.empty(bsz, h, nq, dtype=torch.int32, device=scores.device)
    idx = torch.empty(bsz, h, nq, nk, dtype=torch.int32, device=scores.device)
    _topk_rows[(bsz * h, nq)](scores, _counts(nq, nk, density, scores.device), num, idx,
                              *scores.stride(), *num.stride(), *idx.stride(), h, nk, nk - nq,
                              NK_P2=triton.next_power_of_2(nk))
    return num, idx


def msa_index_select(q: torch.Tensor, k: torch.Tensor, w: torch.Tensor, block: int, density: float,
                     precision: str = "ieee") -> tuple[torch.Tensor, torch.Tensor]:
    """q (B,Hq,Sq,D) bf16, k (B,Hkv,Sk,D) bf16, w (Hkv,D,R) fp32 -> (kv_num_blocks, kv_indices)
    int32: selectors.msa_index's selection; queries are the last Sq of Sk keys."""
    return topk_rows(msa_index_scores(q, k, w, block, precision), density)
