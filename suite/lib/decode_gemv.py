"""Batch-1 GEMV kernels for decode: y = W x with W (N, K) bf16 row-major, x fp32, fp32 accumulate.

Fusions, chosen per call: RMSNorm of x in the prologue (each program sums x^2 while it streams the
same chunks, so y = rstd * W (x * gain) costs no extra pass), a residual added in the epilogue, and
two "pair" epilogues that need two rows per output: SwiGLU (gate row n, up row n + N) and split-half
RoPE over a merged QKV weight, writing q and the new K/V cache slot. Each program streams BLOCK_N
rows (or pairs) over all of K; K is a compile-time constant, so the loop unrolls and every chunk's
load is issued early. With PDL (programmatic dependent launch, sm90) a program loads its first
weight chunk before waiting on the previous kernel: weights never depend on it, x does. A launch
may also ask the L2 for weights a later launch streams (`pf`, suite/lib/l2_prefetch.py), and the
QKV launch of the first layer may gather its input row from the embedding itself (`tok`)."""
from __future__ import annotations

import math

import triton
import triton.language as tl

from suite.lib.dataflow_sync import wait_done
from suite.lib.interp import interpreting
from suite.lib.l2_prefetch import PF_EVICT_LAST, prefetch_args, prefetch_l2

MODE_SWIGLU = 0
MODE_QKV_ROPE = 1


@triton.jit
def _wait(PDL: tl.constexpr, sync_ptr=None, stage=0, target=0):
    """PDL 1: wait for the previous launch (griddepcontrol); 2 or 3: for `target` finished items of
    `stage` of this launch (suite/lib/dataflow_sync.py); 0: nothing to wait for."""
    if PDL == 1:
        tl.extra.cuda.gdc_wait()
    if PDL >= 2:
        wait_done(sync_ptr, stage, target)


@triton.jit
def _ask_l2_rest(w_ptr, rows, K: tl.constexpr, BLOCK_K: tl.constexpr):
    """Ask the L2 for columns BLOCK_K.. of W's rows (one request per 128-byte line, bf16)."""
    for c0 in tl.static_range(BLOCK_K, K, 2048):
        cols = tl.minimum(c0 + tl.arange(0, 32) * 64, K - 64)  # a repeated line costs nothing
        tl.inline_asm_elementwise("prefetch.global.L2 [$1]; mov.u32 $0, 0;", "=r,l",
                                  [w_ptr + rows[:, None] * K + cols[None, :]], dtype=tl.int32, is_pure=False,
                                  pack=1)


@triton.jit
def _launch_next(PDL: tl.constexpr):
    if PDL == 1:
        tl.extra.cuda.gdc_launch_dependents()


@triton.jit
def _x_chunk(x_ptr, g_ptr, k0, cols, rows, NORM: tl.constexpr, X2D: tl.constexpr):
    """(x (BLOCK_K,), x * gain or x) of columns k0 + cols, fp32. X2D: the second in the (rows, cols) tile's own
    layout (each row a copy), so no layout change through shared memory is needed to broadcast it against the
    weights; x itself is then loaded only under NORM (for the sum of squares)."""
    if X2D:
        offs = k0 + cols[None, :] + rows[:, None] * 0
        xg = tl.load(x_ptr + offs).to(tl.float32)
        if NORM:
            xg = xg * tl.load(g_ptr + offs).to(tl.float32)
            x = tl.load(x_ptr + k0 + cols).to(tl.float32)
        else:
            x = xg
    else:
        x = tl.load(x_ptr + k0 + cols).to(tl.float32)
        xg = x
        if NORM:
            xg = x * tl.load(g_ptr + k0 + cols).to(tl.float32)
    return x, xg


@triton.jit
def _fma_chunk(acc, w, xg, ACC2D: tl.constexpr, X2D: tl.constexpr):
    """acc + w * x: reduced over the chunk at once (acc (BLOCK_N,)), or kept (ACC2D: acc (BLOCK_N, BLOCK_K))."""
    if X2D:
        p = w.to(tl.float32) * xg
    else:
        p = w.to(tl.float32) * xg[None, :]
    if ACC2D:
        out = acc + p
    else:
        out = acc + tl.sum(p, 1)
    return out


@triton.jit
def _w_chunk(w_ptr, rows, K: tl.constexpr, k0, cols, EVICT: tl.constexpr):
    """W[rows, k0 + cols] (BLOCK_N, BLOCK_K) bf16."""
    return tl.load(w_ptr + rows[:, None] * K + (k0 + cols)[None, :], eviction_policy=EVICT)


@triton.jit
def _rows_dot(w_ptr, rows_a, rows_b, x_ptr, g_ptr, K: tl.constexpr, BLOCK_N: tl.constexpr,
              BLOCK_K: tl.constexpr, TWO: tl.constexpr, NORM: tl.constexpr, PDL: tl.constexpr,
              EVICT: tl.constexpr, sync_ptr=None, stage=0, target=0, TRIG: tl.constexpr = False,
              PIPE: tl.constexpr = 0, X2D: tl.constexpr = False, ACC2D: tl.constexpr = False,
              PRE: tl.constexpr = 1):
    """(W[rows_a] x, W[rows_b] x or 0, sum x^2) with x *= gain under NORM; fp32. EVICT: the weight
    loads' L2 eviction policy ("" or "evict_first": read once, so they need not displace prefetches).
    The first PRE (1 or 2) chunks of BLOCK_K columns are loaded before the wait (_wait); with PDL 3 the rest
    are asked of the L2. TRIG: the kernel let the next launch start already (no second griddepcontrol signal).
    PIPE (0-2): chunk k+PIPE's weights loaded before chunk k's product and reduction (whose shared-memory
    barriers would otherwise hold the next loads back: one chunk in flight per program); same sums, same order.
    X2D: x in the weight tile's layout (_x_chunk). ACC2D: products summed per column across chunks and
    reduced once at the end (no barrier in the loop; another summation order, registers BLOCK_N*BLOCK_K/threads)."""
    cols = tl.arange(0, BLOCK_K)
    NCH: tl.constexpr = K // BLOCK_K
    wa = _w_chunk(w_ptr, rows_a, K, 0, cols, EVICT)
    wb = wa
    if TWO:
        wb = _w_chunk(w_ptr, rows_b, K, 0, cols, EVICT)
    if PRE == 2 and NCH > 1:
        na = _w_chunk(w_ptr, rows_a, K, BLOCK_K, cols, EVICT)
        nb = na
        if TWO:
            nb = _w_chunk(w_ptr, rows_b, K, BLOCK_K, cols, EVICT)
    if PDL == 3:
        _ask_l2_rest(w_ptr, rows_a, K, BLOCK_K)
        if TWO:
            _ask_l2_rest(w_ptr, rows_b, K, BLOCK_K)
    _wait(PDL, sync_ptr, stage, target)
    if not TRIG:
        _launch_next(PDL)
    if PIPE == 2 and PRE != 2 and NCH > 1:
        na = _w_chunk(w_ptr, rows_a, K, BLOCK_K, cols, EVICT)
        nb = na
        if TWO:
            nb = _w_chunk(w_ptr, rows_b, K, BLOCK_K, cols, EVICT)
    if ACC2D:
        acc_a = tl.zeros([BLOCK_N, BLOCK_K], tl.float32)
        acc_b = tl.zeros([BLOCK_N, BLOCK_K], tl.float32)
    else:
        acc_a = tl.zeros([BLOCK_N], tl.float32)
        acc_b = tl.zeros([BLOCK_N], tl.float32)
    ssq = tl.zeros([BLOCK_K], tl.float32)
    for i in tl.static_range(NCH):
        k0 = i * BLOCK_K
        # what is loaded here: chunk i + PIPE (PIPE; chunk 1 may already be in (na, nb) from before the
        # loop), or chunk i itself (PIPE 0, except chunk 1 under PRE 2)
        if PIPE == 2 and i + 2 < NCH:
            n2a = _w_chunk(w_ptr, rows_a, K, k0 + 2 * BLOCK_K, cols, EVICT)
            n2b = n2a
            if TWO:
                n2b = _w_chunk(w_ptr, rows_b, K, k0 + 2 * BLOCK_K, cols, EVICT)
        if PIPE == 1 and i + 1 < NCH and not (i == 0 and PRE == 2):
            na = _w_chunk(w_ptr, rows_a, K, k0 + BLOCK_K, cols, EVICT)
            nb = na
            if TWO:
                nb = _w_chunk(w_ptr, rows_b, K, k0 + BLOCK_K, cols, EVICT)
        x, xg = _x_chunk(x_ptr, g_ptr, k0, cols, rows_a, NORM, X2D)
        if NORM:
            ssq += x * x
        if not PIPE and i > 0 and not (i == 1 and PRE == 2):
            wa = _w_chunk(w_ptr, rows_a, K, k0, cols, EVICT)
            if TWO:
                wb = _w_chunk(w_ptr, rows_b, K, k0, cols, EVICT)
        # reduced per chunk unless ACC2D: a (BLOCK_N, BLOCK_K) fp32 accumulator per row set can spill
        acc_a = _fma_chunk(acc_a, wa, xg, ACC2D, X2D)
        if TWO:
            acc_b = _fma_chunk(acc_b, wb, xg, ACC2D, X2D)
        if i + 1 < NCH and (PIPE or (i == 0 and PRE == 2)):
            wa = na
            wb = nb
            if PIPE == 2 and i + 2 < NCH:
                na = n2a
                nb = n2b
    if ACC2D:
        acc_a = tl.sum(acc_a, 1)
        acc_b = tl.sum(acc_b, 1)
    return acc_a, acc_b, tl.sum(ssq, 0)


@triton.jit
def gemv_rows(w_ptr, x_ptr, g_ptr, res_ptr, out_ptr, eps, blk, K: tl.constexpr, NORM: tl.constexpr,
              RES: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, PDL: tl.constexpr,
              EVICT: tl.constexpr, sync_ptr=None, stage=0, target=0, EARLY: tl.constexpr = False,
              TRIG: tl.constexpr = False, PIPE: tl.constexpr = 0, X2D: tl.constexpr = False, ACC2D: tl.constexpr = False,
              PRE: tl.constexpr = 1):
    """Rows blk*BLOCK_N.. of out[n] = (rstd *) sum_k W[n,k] x[k] (* gain[k]) (+ res[n]).
    EARLY (only where nothing is waited for in the launch): res loaded before the weights, so its L2
    round trip is not added to the program's tail."""
    rows = blk * BLOCK_N + tl.arange(0, BLOCK_N)
    res = tl.zeros([BLOCK_N], tl.float32)
    if RES and EARLY:
        res = tl.load(res_ptr + rows)
    y, _, ssq = _rows_dot(w_ptr, rows, rows, x_ptr, g_ptr, K, BLOCK_N, BLOCK_K, False, NORM, PDL, EVICT,
                          sync_ptr, stage, target, TRIG=TRIG, PIPE=PIPE, X2D=X2D, ACC2D=ACC2D, PRE=PRE)
    if NORM:
        y = y * tl.math.rsqrt(ssq / K + eps)
    if RES:
        if not EARLY:
            res = tl.load(res_ptr + rows)
        y += res
    tl.store(out_ptr + rows, y)
    return y


@triton.jit
def gemv_kernel(w_ptr, x_ptr, g_ptr, res_ptr, out_ptr, out2_ptr, N, eps, pf_ptr, pf_lines, K: tl.constexpr,
                NORM: tl.constexpr, RES: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                PDL: tl.constexpr, PF: tl.constexpr, EVICT: tl.constexpr, DUP: tl.constexpr, EARLY: tl.constexpr,
                TRIG: tl.constexpr = False, PIPE: tl.constexpr = 0, X2D: tl.constexpr = False, ACC2D: tl.constexpr = False,
              PRE: tl.constexpr = 1):
    """out[n] = (rstd *) sum_k W[n,k] x[k] (* gain[k]) (+ res[n]); N a multiple of BLOCK_N.
    DUP: the same rows also written to out2 (the start of a sum others add into with atomics).
    TRIG: the next launch (launched with PDL) may start at once, not after this one's wait."""
    if TRIG:
        tl.extra.cuda.gdc_launch_dependents()
    prefetch_l2(pf_ptr, pf_lines, tl.program_id(0), tl.num_programs(0), PF)
    y = gemv_rows(w_ptr, x_ptr, g_ptr, res_ptr, out_ptr, eps, tl.program_id(0), K, NORM, RES, BLOCK_N, BLOCK_K,
                  PDL, EVICT, EARLY=EARLY, TRIG=TRIG, PIPE=PIPE, X2D=X2D, ACC2D=ACC2D, PRE=PRE)
    if DUP:
        tl.store(out2_ptr + tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N), y)


@triton.jit
def pair_rows(w_ptr, x_ptr, g_ptr, out_ptr, kc_ptr, vc_ptr, pos_ptr, eps, log2_theta, blk,
              K: tl.constexpr, MODE: tl.constexpr, HALF: tl.constexpr, HQ: tl.constexpr, HKV: tl.constexpr, S,
              NPAIR: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, PDL: tl.constexpr,
              EVICT: tl.constexpr, sync_ptr=None, stage=0, target=0, EARLY: tl.constexpr = False,
              TRIG: tl.constexpr = False, PIPE: tl.constexpr = 0, X2D: tl.constexpr = False, ACC2D: tl.constexpr = False,
              PRE: tl.constexpr = 1):
    """Pairs blk*BLOCK_N.. of gemv_pair_kernel (below), x already the input row. EARLY: pos (an input,
    never written in the step) loaded before the weights instead of in the epilogue."""
    p = blk * BLOCK_N + tl.arange(0, BLOCK_N)
    if EARLY and MODE == 1:
        pos = tl.load(pos_ptr)
    if MODE == 0:
        rows_a = p
        rows_b = p + NPAIR
    else:
        rows_a = (p // HALF) * (2 * HALF) + p % HALF
        rows_b = rows_a + HALF
    a, b, ssq = _rows_dot(w_ptr, rows_a, rows_b, x_ptr, g_ptr, K, BLOCK_N, BLOCK_K, True, True, PDL, EVICT,
                            sync_ptr, stage, target, TRIG=TRIG, PIPE=PIPE, X2D=X2D, ACC2D=ACC2D, PRE=PRE)
    rstd = tl.math.rsqrt(ssq / K + eps)
    a = a * rstd
    b = b * rstd
    if MODE == 0:
        tl.store(out_ptr + p, a / (1 + tl.exp(-a)) * b)
    else:
        h = p // HALF
        j = p % HALF
        if not EARLY:
            pos = tl.load(pos_ptr)
        # angle = pos * theta^(-2j/D), D = 2 HALF; fp32 as the page's "computed on the fly" tables
        ang = pos.to(tl.float32) * tl.math.exp2(-(j.to(tl.float32) / HALF) * log2_theta)
        c = tl.cos(ang)
        s = tl.sin(ang)
        rot = h < HQ + HKV
        ra = tl.where(rot, a * c - b * s, a)
        rb = tl.where(rot, b * c + a * s, b)
        tl.store(out_ptr + rows_a, ra, mask=h < HQ)
        tl.store(out_ptr + rows_b, rb, mask=h < HQ)
        hk = tl.where(h < HQ + HKV, h - HQ, h - HQ - HKV)
        slot = (hk * S + pos) * (2 * HALF) + j
        is_k = (h >= HQ) & (h < HQ + HKV)
        is_v = h >= HQ + HKV
        tl.store(kc_ptr + slot, ra.to(tl.bfloat16), mask=is_k)
        tl.store(kc_ptr + slot + HALF, rb.to(tl.bfloat16), mask=is_k)
        tl.store(vc_ptr + slot, ra.to(tl.bfloat16), mask=is_v)
        tl.store(vc_ptr + slot + HALF, rb.to(tl.bfloat16), mask=is_v)


@triton.jit
def embed_row(x_ptr, tok_ptr, x_out, write, K: tl.constexpr, BLOCK_K: tl.constexpr):
    """Pointer to row tok of the bf16 table at x_ptr (K wide); where write, the row copied to x_out fp32."""
    x_ptr += tl.load(tok_ptr) * K
    if write:
        for k0 in tl.static_range(0, K, BLOCK_K):
            xs = k0 + tl.arange(0, BLOCK_K)
            tl.store(x_out + xs, tl.load(x_ptr + xs).to(tl.float32))
    return x_ptr


@triton.jit
def gemv_pair_kernel(w_ptr, x_ptr, g_ptr, out_ptr, kc_ptr, vc_ptr, pos_ptr, eps, log2_theta,
                     pf_ptr, pf_lines, tok_ptr, x_out,
                     K: tl.constexpr, MODE: tl.constexpr, HALF: tl.constexpr, HQ: tl.constexpr,
                     HKV: tl.constexpr, S, NPAIR: tl.constexpr,
                     BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, PDL: tl.constexpr, PF: tl.constexpr,
                     EVICT: tl.constexpr, EMB: tl.constexpr, EARLY: tl.constexpr, TRIG: tl.constexpr = False, PIPE: tl.constexpr = 0, X2D: tl.constexpr = False, ACC2D: tl.constexpr = False,
              PRE: tl.constexpr = 1):
    """Two rows per output pair p, with the input RMSNorm fused.
    SWIGLU: rows p and p + NPAIR; out[p] = silu(a) * b.
    QKV_ROPE: head h = p // HALF, j = p % HALF, rows h*2*HALF + j and + HALF (the two halves RoPE
    rotates together); q heads (h < HQ) rotated into out (HQ*2*HALF,), k heads rotated and v heads
    as they are into slot pos of the caches kc, vc (HKV, S, 2*HALF) bf16.
    EMB: x is row tok of the table at x_ptr (bf16), and program 0 also writes it to x_out in fp32.
    TRIG: the next launch (launched with PDL) may start at once."""
    if TRIG:
        tl.extra.cuda.gdc_launch_dependents()
    prefetch_l2(pf_ptr, pf_lines, tl.program_id(0), tl.num_programs(0), PF)
    if EMB:
        x_ptr = embed_row(x_ptr, tok_ptr, x_out, tl.program_id(0) == 0, K, BLOCK_K)
    pair_rows(w_ptr, x_ptr, g_ptr, out_ptr, kc_ptr, vc_ptr, pos_ptr, eps, log2_theta, tl.program_id(0), K, MODE,
              HALF, HQ, HKV, S, NPAIR, BLOCK_N, BLOCK_K, PDL, EVICT, EARLY=EARLY, TRIG=TRIG, PIPE=PIPE, X2D=X2D,
              ACC2D=ACC2D, PRE=PRE)


def block_n(n_out: int, target_programs: int = 264) -> int:
    """Rows per program: the largest power of two <= 16 leaving >= target_programs programs (two per
    SM of an H200), at least 1; always a divisor of n_out when n_out is a multiple of 16. Under the
    interpreter, where each program costs host time, 16 whenever it divides n_out."""
    if interpreting():
        target_programs = 1
    bn = 16
    while bn > 1 and (n_out // bn < target_programs or n_out % bn):
        bn //= 2
    return bn


def launch_opts(pdl: bool) -> dict:
    """Launch keywords: PDL only on a GPU (the interpreter has no griddepcontrol)."""
    return {"launch_pdl": True} if pdl and not interpreting() else {}


def gemv(out, w, x, gain=None, res=None, eps: float = 1e-5, block_k: int = 1024, pdl: bool = False,
         num_warps: int = 4, target_programs: int = 264, pf=None, pf_policy: int = PF_EVICT_LAST,
         evict: str = "", out2=None, early: bool = True, trig: bool = False, pipe: int = 0,
         x2d: bool = False, acc2d: bool = False, pre: int = 1) -> None:
    """out (N,) fp32 = [rmsnorm(x) * gain] W^T (+ res); w (N,K) bf16, x (K,) fp32, gain (K,) bf16;
    pf: a contiguous bf16 tensor to ask the L2 for (or None); out2 (N,) fp32: a second copy of out;
    early: res loaded before the weights (not with PDL, whose wait comes after the first loads);
    trig: the next launch, launched with PDL, may start as soon as this one does; pipe, x2d, acc2d, pre: the
    loop's form (_rows_dot's PIPE, X2D, ACC2D, PRE)."""
    n, k = w.shape
    bk = min(block_k, k)
    bn = block_n(n, target_programs)
    pf_t, pf_lines, pf_mode = prefetch_args(pf, pf_policy)
    gemv_kernel[(n // bn,)](w, x, gain if gain is not None else x, res if res is not None else out, out,
                            out2 if out2 is not None else out, n, eps, pf_t if pf_mode else w, pf_lines, K=k,
                            NORM=gain is not None,
                            RES=res is not None, BLOCK_N=bn, BLOCK_K=bk, PDL=pdl and not interpreting(),
                            PF=pf_mode, EVICT=evict, DUP=out2 is not None, EARLY=early and not pdl,
                            TRIG=trig and not interpreting(), PIPE=int(pipe), X2D=x2d, ACC2D=acc2d, PRE=pre,
                            num_warps=num_warps, **launch_opts(pdl))


def gemv_pair(out, w, x, gain, mode: int, kc=None, vc=None, pos=None, heads=(0, 0), head_dim=2,
              eps: float = 1e-5, theta: float = 500000.0, block_k: int = 1024, pdl: bool = False,
              num_warps: int = 4, target_programs: int = 264, pf=None, pf_policy: int = PF_EVICT_LAST,
              evict: str = "", tok=None, x_out=None, early: bool = True, trig: bool = False, pipe: int = 0,
              x2d: bool = False, acc2d: bool = False, pre: int = 1) -> None:
    """SWIGLU: out (N/2,) fp32 from w (N, K) = [gate; up]. QKV_ROPE: out (Hq*D,) fp32 q, K/V written to
    kc, vc (Hkv, S, D) bf16 at pos (1,) int64; w ((Hq+2Hkv)*D, K). x (K,) fp32, gain (K,) bf16; or, with
    tok (1,) int64, x (V, K) bf16 a table whose row tok is the input, copied to x_out (K,) fp32.
    trig: the next launch, launched with PDL, may start as soon as this one does; pipe, x2d, acc2d, pre: gemv's."""
    n2, k = w.shape
    npair = n2 // 2
    bk = min(block_k, k)
    bn = block_n(npair, target_programs)
    hq, hkv = heads
    S = kc.shape[1] if kc is not None else 1
    pf_t, pf_lines, pf_mode = prefetch_args(pf, pf_policy)
    gemv_pair_kernel[(npair // bn,)](
        w, x, gain, out, kc if kc is not None else out, vc if vc is not None else out,
        pos if pos is not None else out, eps, math.log2(theta), pf_t if pf_mode else w, pf_lines,
        tok if tok is not None else out, x_out if x_out is not None else out,
        K=k, MODE=mode, HALF=head_dim // 2, HQ=hq, HKV=hkv, S=S, NPAIR=npair, BLOCK_N=bn, BLOCK_K=bk,
        PDL=pdl and not interpreting(), PF=pf_mode, EVICT=evict, EMB=tok is not None, EARLY=early,
        TRIG=trig and not interpreting(), PIPE=int(pipe), X2D=x2d, ACC2D=acc2d, PRE=pre,
        num_warps=num_warps, **launch_opts(pdl))
