"""Split-KV decode attention for one query token with GQA: each program takes one KV head (its
G = Hq/Hkv query heads together, so K/V are read once) over one chunk of the cache, keeps an online
softmax, and writes its unnormalised partial; the last program of each KV head to finish (a counter
per head) merges the partials, so the whole attention is one launch. Counters return to 0 for the
next call (CUDA-graph replays)."""
from __future__ import annotations

import math

import torch
import triton
import triton.language as tl

from suite.lib.decode_gemv import _launch_next, _wait
from suite.lib.interp import interpreting
from suite.lib.l2_prefetch import PF_EVICT_LAST, prefetch_args, prefetch_l2
from suite.lib.triton_round import round_bf16


@triton.jit
def merge_partials(part_o, part_ml, rows, d, D: tl.constexpr):
    """(G, D) fp32: the split partials of rows (NSPLIT, G) (their rows in part_o (.., D), part_ml (.., 2))
    weighted by exp2(m - max m) and normalised. Every load is issued before any reduction (one L2 round trip)."""
    po = tl.load(part_o + rows[:, :, None] * D + d[None, None, :]).to(tl.float32)  # (NSPLIT, G, D)
    ms = tl.load(part_ml + rows * 2)
    ls = tl.load(part_ml + rows * 2 + 1)
    mx = tl.max(ms, 0)  # (G,); split 0 always holds slot 0 <= pos, so finite
    wgt = tl.math.exp2(ms - mx[None, :])
    return tl.sum(wgt[:, :, None] * po, 0) / tl.sum(wgt * ls, 0)[:, None]


@triton.jit
def _store_and_merge(acc, m, lsum, g, d, rmask, hk, sp, part_o, part_ml, count_ptr, out_ptr,
                     G: tl.constexpr, D: tl.constexpr, NSPLIT: tl.constexpr, MERGE: tl.constexpr = 0,
                     STORE_ONLY: tl.constexpr = False):
    """Store this split's partial (rows g < G of acc, m, lsum); the KV head's last split merges all.
    MERGE: the merge reads the partials MERGE splits at a time (0: all at once, NSPLIT*G*D fp32 held in
    registers, which sets the whole kernel's register count). STORE_ONLY: no counter, no merge (the next
    launch merges, suite/lib/decode_o_merge.py)."""
    slot = hk * NSPLIT + sp
    # part_o is fp32 or bf16 (half the merge's load and registers; the partial rounded once)
    tl.store(part_o + (slot * G + g)[:, None] * D + d[None, :], acc.to(part_o.dtype.element_ty), mask=rmask[:, None])
    tl.store(part_ml + (slot * G + g) * 2, m, mask=rmask)
    tl.store(part_ml + (slot * G + g) * 2 + 1, lsum, mask=rmask)
    if not STORE_ONLY:
        # acq_rel: the partials above are visible to whichever program sees the last count
        done = tl.atomic_add(count_ptr + hk, 1, sem="acq_rel")
        if done == NSPLIT - 1:
            gg = tl.arange(0, G)
            rows = (hk * NSPLIT + tl.arange(0, NSPLIT))[:, None] * G + gg[None, :]  # (NSPLIT, G)
            if not MERGE:  # 0, or None where a caller compiles the kernel without naming it
                o = merge_partials(part_o, part_ml, rows, d, D)
            else:
                ms = tl.load(part_ml + rows * 2)
                mx = tl.max(ms, 0)
                den = tl.sum(tl.math.exp2(ms - mx[None, :]) * tl.load(part_ml + rows * 2 + 1), 0)
                o = tl.zeros([G, D], tl.float32)
                for c in tl.range(0, NSPLIT, MERGE):
                    rc = (hk * NSPLIT + c + tl.arange(0, MERGE))[:, None] * G + gg[None, :]  # (MERGE, G)
                    wc = tl.math.exp2(tl.load(part_ml + rc * 2) - mx[None, :])
                    po = tl.load(part_o + rc[:, :, None] * D + d[None, None, :]).to(tl.float32)  # (MERGE, G, D)
                    o += tl.sum(wc[:, :, None] * po, 0)
                o = o / den[:, None]
            tl.store(out_ptr + (hk * G + gg)[:, None] * D + d[None, :], o)
            tl.atomic_xchg(count_ptr + hk, 0)


@triton.jit
def decode_attn_kernel(q_ptr, kc_ptr, vc_ptr, pos_ptr, part_o, part_ml, count_ptr, out_ptr, S, qk_scale,
                       pf_ptr, pf_lines,
                       G: tl.constexpr, D: tl.constexpr, CHUNK: tl.constexpr, BLOCK_S: tl.constexpr,
                       NSPLIT: tl.constexpr, PDL: tl.constexpr, PF: tl.constexpr, MERGE: tl.constexpr = 0):
    hk = tl.program_id(0)
    sp = tl.program_id(1)
    prefetch_l2(pf_ptr, pf_lines, hk * NSPLIT + sp, tl.num_programs(0) * NSPLIT, PF)
    g = tl.arange(0, G)
    d = tl.arange(0, D)
    _wait(PDL)
    _launch_next(PDL)
    pos = tl.load(pos_ptr)
    q = tl.load(q_ptr + (hk * G + g)[:, None] * D + d[None, :]) * qk_scale  # (G, D), log2 units
    m = tl.full([G], float("-inf"), tl.float32)
    lsum = tl.zeros([G], tl.float32)
    acc = tl.zeros([G, D], tl.float32)
    base = hk * S * D
    for s0 in tl.range(sp * CHUNK, sp * CHUNK + CHUNK, BLOCK_S):
        s = s0 + tl.arange(0, BLOCK_S)
        valid = s <= pos
        k = tl.load(kc_ptr + base + s[:, None] * D + d[None, :], mask=valid[:, None], other=0.0).to(tl.float32)
        v = tl.load(vc_ptr + base + s[:, None] * D + d[None, :], mask=valid[:, None], other=0.0).to(tl.float32)
        sc = tl.sum(q[:, None, :] * k[None, :, :], 2)  # (G, BLOCK_S)
        sc = tl.where(valid[None, :], sc, float("-inf"))
        m_new = tl.maximum(m, tl.max(sc, 1))
        m_safe = tl.where(m_new == float("-inf"), 0.0, m_new)  # a chunk wholly past pos
        alpha = tl.math.exp2(m - m_safe)
        p = tl.math.exp2(sc - m_safe[:, None])
        lsum = lsum * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None] + tl.sum(p[:, :, None] * v[None, :, :], 1)
        m = m_new
    _store_and_merge(acc, m, lsum, g, d, g < G, hk, sp, part_o, part_ml, count_ptr, out_ptr, G, D, NSPLIT, MERGE)


@triton.jit
def decode_attn_mma_kernel(q_ptr, kc_ptr, vc_ptr, pos_ptr, part_o, part_ml, count_ptr, out_ptr, S, qk_scale,
                           pf_ptr, pf_lines,
                           G: tl.constexpr, D: tl.constexpr, CHUNK: tl.constexpr, BLOCK_S: tl.constexpr,
                           NSPLIT: tl.constexpr, PDL: tl.constexpr, UPCAST: tl.constexpr, PF: tl.constexpr,
                           EARLY: tl.constexpr, PRE: tl.constexpr = False, TRIG: tl.constexpr = False,
                           MERGE: tl.constexpr = 0, PATCH_IF: tl.constexpr = False,
                           copy_src=None, copy_dst=None, COPY_N: tl.constexpr = 0):
    """The same split and merge with both products on tensor cores (attn_mma_item). TRIG: let the next
    launch start now (griddepcontrol), not after this one's wait. PRE: the split's first tile of the
    cache slots before pos loaded before the wait (no launch writes them in the step). COPY_N > 0: the
    partials stored, not merged (the next launch merges them), and program (0, 0) copies copy_src[:COPY_N]
    (fp32) to copy_dst after the wait (the residual that launch adds its shares into)."""
    hk = tl.program_id(0)
    sp = tl.program_id(1)
    if TRIG:
        tl.extra.cuda.gdc_launch_dependents()
    prefetch_l2(pf_ptr, pf_lines, hk * NSPLIT + sp, tl.num_programs(0) * NSPLIT, PF)
    if not PRE:
        _wait(PDL)
        if not TRIG:
            _launch_next(PDL)
    attn_mma_item(q_ptr, kc_ptr, vc_ptr, pos_ptr, part_o, part_ml, count_ptr, out_ptr, S, qk_scale, hk, sp,
                  G, D, CHUNK, BLOCK_S, NSPLIT, UPCAST, EARLY, PRE=PRE, PDL=PDL, MERGE=MERGE, PATCH_IF=PATCH_IF,
                  STORE_ONLY=COPY_N)  # COPY_N: 0, or None where a caller compiles without naming it
    if COPY_N:
        if (hk == 0) & (sp == 0):
            c = tl.arange(0, COPY_N)
            tl.store(copy_dst + c, tl.load(copy_src + c))


@triton.jit
def _kv_tile(kc_ptr, vc_ptr, base, s, d, mask, D: tl.constexpr):
    """K^T (D, BLOCK_S) and V (BLOCK_S, D) of cache slots s (bf16), zero where not mask."""
    kt = tl.load(kc_ptr + base + s[None, :] * D + d[:, None], mask=mask[None, :], other=0.0)
    v = tl.load(vc_ptr + base + s[:, None] * D + d[None, :], mask=mask[:, None], other=0.0)
    return kt, v


@triton.jit
def _patch_slot(kt, v, kc_ptr, vc_ptr, base, pos, s, d, has, D: tl.constexpr):
    """K^T and V tiles of slots s with slot pos's K/V (written by the launch before) put in where has."""
    knew = tl.load(kc_ptr + base + pos * D + d, mask=has & (d < D), other=0.0)
    vnew = tl.load(vc_ptr + base + pos * D + d, mask=has & (d < D), other=0.0)
    return tl.where((s == pos)[None, :], knew[:, None], kt), tl.where((s == pos)[:, None], vnew[None, :], v)


@triton.jit
def _attn_tile(q, kt, v, valid, m, lsum, acc, UPCAST: tl.constexpr):
    """One tile of the online softmax: scores q kt (16, BLOCK_S) masked by valid, then p v into acc."""
    if UPCAST:
        sc = tl.dot(q, kt.to(tl.float32), input_precision="ieee")
    else:
        sc = tl.dot(q, kt)
    sc = tl.where(valid[None, :], sc, float("-inf"))
    m_new = tl.maximum(m, tl.max(sc, 1))
    m_safe = tl.where(m_new == float("-inf"), 0.0, m_new)
    alpha = tl.math.exp2(m - m_safe)
    p = tl.math.exp2(sc - m_safe[:, None])
    lsum = lsum * alpha + tl.sum(p, 1)
    if UPCAST:
        acc = acc * alpha[:, None] + tl.dot(round_bf16(p), v.to(tl.float32), input_precision="ieee")
    else:
        acc = acc * alpha[:, None] + tl.dot(p.to(tl.bfloat16), v)
    return m_new, lsum, acc


@triton.jit
def attn_mma_item(q_ptr, kc_ptr, vc_ptr, pos_ptr, part_o, part_ml, count_ptr, out_ptr, S, qk_scale, hk, sp,
                  G: tl.constexpr, D: tl.constexpr, CHUNK: tl.constexpr, BLOCK_S: tl.constexpr,
                  NSPLIT: tl.constexpr, UPCAST: tl.constexpr, EARLY: tl.constexpr = False,
                  PRE: tl.constexpr = False, PDL: tl.constexpr = 0, MERGE: tl.constexpr = 0,
                  PATCH_IF: tl.constexpr = False, STORE_ONLY: tl.constexpr = False):
    """KV head hk, split sp: both products on tensor cores, the G query rows padded to 16 (an MMA
    tile's least M), q and p rounded to bf16 as flash attention does; the head's last split merges.
    EARLY: K and V loaded masked by S only, so their loads do not wait for pos's; slots past pos are
    then zeroed (V) and their scores set to -inf, so whatever they hold (NaN included) is not used.
    PRE: the first tile's slots before pos loaded before _wait(PDL) (the previous launch writes only
    slot pos, read after the wait), so the cache streams while that launch drains."""
    g = tl.arange(0, 16)
    d = tl.arange(0, D)
    pos = tl.load(pos_ptr)
    base = hk * S * D
    first = sp * CHUNK
    if PRE:
        s = first + tl.arange(0, BLOCK_S)
        kt0, v0 = _kv_tile(kc_ptr, vc_ptr, base, s, d, s < pos, D)
        _wait(PDL)
        has = (pos >= first) & (pos < first + BLOCK_S)
        if PATCH_IF:  # only the split holding slot pos patches it in (a branch, not selects in every split)
            if has:
                kt0, v0 = _patch_slot(kt0, v0, kc_ptr, vc_ptr, base, pos, s, d, has, D)
        else:
            kt0, v0 = _patch_slot(kt0, v0, kc_ptr, vc_ptr, base, pos, s, d, has, D)
    q = tl.load(q_ptr + (hk * G + g)[:, None] * D + d[None, :], mask=(g < G)[:, None], other=0.0) * qk_scale
    if UPCAST:  # the interpreter's bf16 dot is wrong; bf16 products are exact in fp32
        q = round_bf16(q)
    else:
        q = q.to(tl.bfloat16)
    m = tl.full([16], float("-inf"), tl.float32)
    lsum = tl.zeros([16], tl.float32)
    acc = tl.zeros([16, D], tl.float32)
    if PRE:
        m, lsum, acc = _attn_tile(q, kt0, v0, s <= pos, m, lsum, acc, UPCAST)
        first += BLOCK_S
    for s0 in tl.range(first, sp * CHUNK + CHUNK, BLOCK_S):
        s = s0 + tl.arange(0, BLOCK_S)
        valid = s <= pos
        if EARLY:
            kt, v = _kv_tile(kc_ptr, vc_ptr, base, s, d, s < S, D)
            v = tl.where(valid[:, None], v, 0.0)  # scores past pos are masked below
        else:
            kt, v = _kv_tile(kc_ptr, vc_ptr, base, s, d, valid, D)
        m, lsum, acc = _attn_tile(q, kt, v, valid, m, lsum, acc, UPCAST)
    _store_and_merge(acc, m, lsum, g, d, g < G, hk, sp, part_o, part_ml, count_ptr, out_ptr, G, D, NSPLIT, MERGE,
                     STORE_ONLY)


def split_plan(S: int, block_s: int = 32, max_split: int = 64, min_tiles: int = 2) -> tuple[int, int]:
    """(chunk, nsplit): nsplit a power of two (a tl.arange bound) up to max_split, each chunk at least
    min_tiles BLOCK_S tiles. Few tiles per program: the online softmax makes each tile wait on the last, so
    a long chunk is latency-bound (on the H200, 16 splits of 512 slots at S = 8192 took ~7x the time
    their bytes need). Under the interpreter at most 2 splits (each program costs host time)."""
    if interpreting():
        max_split = min(max_split, 2)
    nsplit = 1
    while nsplit * 2 <= max_split and nsplit * 2 * block_s * min_tiles <= S:
        nsplit *= 2
    chunk = triton.cdiv(triton.cdiv(S, nsplit), block_s) * block_s
    return chunk, nsplit


def tile_for(S: int, max_split: int, mma: bool) -> int:
    """block_s="split": the tile that gives max_split splits of one tile each (a power of two, 32-128 slots
    for the tensor-core kernel, 16-64 for the other), so no split waits on a tile before its last. Tiles
    of 16 were slower on the H200 (KV 1024: 64 splits of 16, 0.831 ms, against 32 of 32, 0.789)."""
    want = triton.next_power_of_2(triton.cdiv(S, max_split))
    return max(32 if mma else 16, min(128 if mma else 64, want))


class DecodeAttention:
    """Scratch for one shape: partials, merge counters; call(out, q, kc, vc, pos). mma=True: the
    tensor-core kernel (tiles of 64 slots, one tile per split at least), G = Hq/Hkv <= 16. part_dtype:
    the partial outputs' (fp32, or bf16: the merge loads half the bytes into half the registers)."""

    def __init__(self, hq: int, hkv: int, S: int, D: int, device, block_s: int | str | None = None,
                 pdl: bool = False, num_warps: int | str = 4, max_split: int = 64, mma: bool = False,
                 part_dtype: torch.dtype = torch.float32):
        block_s = tile_for(S, max_split, mma) if block_s == "split" else block_s or (64 if mma else 32)
        # "auto": 2 warps for tiles of up to 32 slots, else 4 (H200, KV 1024 with tiles of 32: 0.770 against
        # 0.789-0.799 ms on 4 warps; KV 8192 with tiles of 128: 0.892 on 2 against 0.887-0.888 on 4)
        num_warps = (2 if block_s <= 32 else 4) if num_warps == "auto" else num_warps
        self.g, self.d, self.S, self.hkv, self.block_s, self.mma = hq // hkv, D, S, hkv, block_s, mma
        assert not mma or self.g <= 16, "mma pads the query group to 16 rows"
        self.chunk, self.nsplit = split_plan(S, block_s, max_split, 1 if mma else 2)
        self.part_o = torch.empty(hkv * self.nsplit * self.g * D, device=device, dtype=part_dtype)
        self.part_ml = torch.empty(hkv * self.nsplit * self.g * 2, device=device, dtype=torch.float32)
        self.count = torch.zeros(hkv, device=device, dtype=torch.int32)
        self.pdl = pdl and not interpreting()
        self.num_warps = num_warps

    def __call__(self, out, q, kc, vc, pos, pf=None, pf_policy: int = PF_EVICT_LAST, early: bool = False,
                 pdl: bool | None = None, trig: bool = False, pre: bool = False, merge: int = 0, maxnreg: int | None = None,
                 patch_if: bool = False, defer: tuple | None = None) -> None:
        """out (Hq*D,) fp32 <- softmax(q k^T / sqrt(D)) v over cache slots 0..pos; q (Hq*D,) fp32,
        kc, vc (Hkv, S, D) bf16, pos (1,) int64; pf: a bf16 tensor to ask the L2 for, or None; early:
        the tensor-core kernel's K/V loads issued without waiting for pos. pdl: this launch's PDL (None:
        the instance's); trig: the next launch may start at once; pre: the cache's first tile before
        pos loaded before the wait (tensor-core kernel); merge: the last split merges the partials this
        many splits at a time (0: all at once; at KV 8192, 64 splits, compiled for sm_90: 160 registers a
        thread with 0, 96 with 4-16, so 5 programs of 4 warps fit an SM instead of 3); maxnreg: the
        registers a thread may use (ptxas spills the rest; at KV 8192, 128: 64 bytes spilled, 4 programs
        an SM, so the 512 programs fit in one wave on 132 SMs); patch_if: with pre, only the split holding slot
        pos patches it into its early tile, behind a branch (otherwise every split selects over its whole tile:
        ~260 PRMT/SEL after the wait in the sm_90 SASS at KV 8192); defer (tensor-core kernel): (src, dst) fp32,
        the partials only stored (out untouched) and src copied to dst after the wait, for o_merge
        (suite/lib/decode_o_merge.py) to merge and add its shares into."""
        pdl = self.pdl if pdl is None else pdl and not interpreting()
        pf_t, pf_lines, pf_mode = prefetch_args(pf, pf_policy)
        scale = math.log2(math.e) / math.sqrt(self.d)
        assert self.mma or not (trig or pre or defer), "trig / pre / defer: the tensor-core kernel only"
        src, dst = defer or (None, None)
        kernel, extra = ((decode_attn_mma_kernel, {"UPCAST": interpreting(), "EARLY": early, "PRE": pre,
                                                   "TRIG": trig and not interpreting(), "PATCH_IF": patch_if,
                                                   "copy_src": src, "copy_dst": dst,
                                                   "COPY_N": src.numel() if defer else 0})
                         if self.mma
                         else (decode_attn_kernel, {}))
        kernel[(self.hkv, self.nsplit)](
            q, kc, vc, pos, self.part_o, self.part_ml, self.count, out, self.S, scale,
            pf_t if pf_mode else kc, pf_lines, PF=pf_mode, G=self.g, D=self.d, CHUNK=self.chunk,
            BLOCK_S=self.block_s, NSPLIT=self.nsplit, MERGE=min(merge, self.nsplit),
            PDL=pdl, num_warps=self.num_warps, **extra, **({"launch_pdl": True} if pdl else {}),
            **({"maxnreg": maxnreg} if maxnreg and not interpreting() else {}))
