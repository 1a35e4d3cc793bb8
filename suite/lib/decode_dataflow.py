"""The whole batch-1 decode step as one launch of work items with dependency counters (no grid barrier).

Each program claims a ticket (suite/lib/dataflow_sync.py) and runs that item: a block of rows of one
GEMV stage (QKV + RoPE + cache write, O + residual, gate/up + SwiGLU, down + residual, the LM head) or
one split of attention (with its merge). Tickets go stage by stage, layer by layer, so an item waits
only on items claimed before it. A GEMV item loads its weight block (all of K by default) BEFORE it
waits for the previous stage: weights never depend on it, so the next stage's loads stream while the
current one drains, and no launch boundary is left. One program per item, as many as the per-launch
kernels have, so the hardware keeps refilling the SMs. The last head item resets the counters for the
next call (CUDA-graph replays). Under the interpreter programs run in order: every wait is met."""
from __future__ import annotations

import math

import torch
import triton
import triton.language as tl

from suite.lib.dataflow_sync import claim, signal_done, wait_done
from suite.lib.decode_attention import attn_mma_item, split_plan
from suite.lib.decode_gemv import MODE_SWIGLU, embed_row, gemv, gemv_pair, gemv_rows, pair_rows
from suite.lib.interp import interpreting
from suite.lib.llama import EPS, THETA

# rows (pairs) per item and the K chunk loaded before the wait: 128 registers with 4 warps, so 4 programs
# per SM; 32-64 KB of weights per item (QKV and O: all of K loaded before the wait; gate/up, down, head: the
# first chunk). Half the items (and a fifth less time, H200) of 16-32 KB items; bigger ones take more registers.
ROWS = {"QKV": 4, "O": 4, "GU": 8, "D": 4, "HEAD": 8}
BLOCK_K = {"QKV": 2048, "O": 2048, "GU": 1024, "D": 1024, "HEAD": 512}


@triton.jit
def _ask_l2_kv(kc, vc, pos_ptr, hk, sp, S, D: tl.constexpr, CHUNK: tl.constexpr):
    """Ask the L2 for slots sp*CHUNK.. (up to pos) of KV head hk's K and V rows (D bf16 each)."""
    s = tl.minimum(sp * CHUNK + tl.arange(0, CHUNK), tl.load(pos_ptr).to(tl.int32))
    for c in tl.static_range(0, D, 64):
        addr = (hk * S + s) * D + c
        tl.inline_asm_elementwise("prefetch.global.L2 [$1]; mov.u32 $0, 0;", "=r,l", [kc + addr],
                                  dtype=tl.int32, is_pure=False, pack=1)
        tl.inline_asm_elementwise("prefetch.global.L2 [$1]; mov.u32 $0, 0;", "=r,l", [vc + addr],
                                  dtype=tl.int32, is_pure=False, pack=1)


@triton.jit
def _reset(sync, L: tl.constexpr, NSYNC: tl.constexpr):
    """Counters back to 0 for the next call (the give-up flag stays)."""
    i = tl.arange(0, NSYNC)
    tl.store(sync + i, tl.zeros([NSYNC], tl.int32), mask=(i != 1) & (i < 5 * L + 3))


@triton.jit
def _front(t, emb, wqkv, wo, ln1, kc, vc, tok_ptr, pos_ptr, hs, q, att, part_o, part_ml, count, sync, eps,
           log2_theta, qk_scale, S, l, r, L: tl.constexpr, H: tl.constexpr, HQ: tl.constexpr, HKV: tl.constexpr,
           D: tl.constexpr, BN_QKV: tl.constexpr, BN_O: tl.constexpr, BK_QKV: tl.constexpr, BK_O: tl.constexpr,
           CHUNK: tl.constexpr, BLOCK_S: tl.constexpr, NSPLIT: tl.constexpr, UPCAST: tl.constexpr,
           EVICT: tl.constexpr, NSYNC: tl.constexpr, WAIT: tl.constexpr, ND: tl.constexpr, SUB: tl.constexpr):
    """Item r of layer l's QKV (+ RoPE, cache write), attention splits or O (+ residual). SUB: the layer is a
    launch of its own, so QKV waits on nothing and the last O item resets the counters."""
    NQKV: tl.constexpr = (HQ + 2 * HKV) * D
    NQ: tl.constexpr = NQKV // 2 // BN_QKV
    NA: tl.constexpr = HKV * NSPLIT
    NO: tl.constexpr = H // BN_O
    WAIT_Q: tl.constexpr = 0 if SUB else WAIT
    kv_l = l * (HKV * S * D)
    if t < NQ:  # layer 0's QKV gathers its input row from the embedding (program 0 keeps it in hs[0])
        x = embed_row(emb, tok_ptr, hs, t == 0, H, BK_QKV)
        pair_rows(wqkv, x, ln1, q, kc, vc, pos_ptr, eps, log2_theta, t, H, 1, D // 2, HQ, HKV, S, NQKV // 2,
                  BN_QKV, BK_QKV, 0, EVICT)
        signal_done(sync, 0)
    elif r < NQ:
        pair_rows(wqkv + l * (NQKV * H), hs + 2 * l * H, ln1 + l * H, q, kc + kv_l, vc + kv_l, pos_ptr, eps,
                  log2_theta, r, H, 1, D // 2, HQ, HKV, S, NQKV // 2, BN_QKV, BK_QKV, WAIT_Q, EVICT, sync, 5 * l - 1,
                  ND)
        signal_done(sync, 5 * l)
    elif r < NQ + NA:
        it = r - NQ
        if WAIT == 3:  # ask the L2 for this split's K/V slots (all but pos are already written)
            _ask_l2_kv(kc + kv_l, vc + kv_l, pos_ptr, it // NSPLIT, it % NSPLIT, S, D, CHUNK)
        wait_done(sync, 5 * l, NQ)
        attn_mma_item(q, kc + kv_l, vc + kv_l, pos_ptr, part_o, part_ml, count, att, S, qk_scale,
                      it // NSPLIT, it % NSPLIT, HQ // HKV, D, CHUNK, BLOCK_S, NSPLIT, UPCAST)
        signal_done(sync, 5 * l + 1)
    elif r < NQ + NA + NO:
        gemv_rows(wo + l * (H * HQ * D), att, att, hs + 2 * l * H, hs + (2 * l + 1) * H, eps, r - NQ - NA,
                  HQ * D, False, True, BN_O, BK_O, WAIT, EVICT, sync, 5 * l + 1, NA)
        last = signal_done(sync, 5 * l + 2)
        if SUB:
            if last == NO - 1:  # the launch's last item: counters back to 0 for the next layer
                _reset(sync, L, NSYNC)


@triton.jit
def _item(t, emb, wqkv, wo, wgu, wd, ln1, ln2, lnf, kc, vc, tok_ptr, pos_ptr, logits, hs, q, att, act,
          part_o, part_ml, count, sync, eps, log2_theta, qk_scale, S,
          L: tl.constexpr, H: tl.constexpr, HQ: tl.constexpr, HKV: tl.constexpr, D: tl.constexpr,
          INTER: tl.constexpr, BN_QKV: tl.constexpr, BN_O: tl.constexpr, BN_GU: tl.constexpr,
          BN_D: tl.constexpr, BN_HEAD: tl.constexpr, BK_QKV: tl.constexpr, BK_O: tl.constexpr,
          BK_GU: tl.constexpr, BK_D: tl.constexpr, BK_HEAD: tl.constexpr, CHUNK: tl.constexpr,
          BLOCK_S: tl.constexpr, NSPLIT: tl.constexpr, UPCAST: tl.constexpr, EVICT: tl.constexpr,
          NSYNC: tl.constexpr, WAIT: tl.constexpr, SUB: tl.constexpr):
    """Item t: stage counters sync[2 + 5l + s] (s: 0 QKV, 1 attention, 2 O, 3 gate/up, 4 down), head 5L."""
    NQKV: tl.constexpr = (HQ + 2 * HKV) * D
    NQ: tl.constexpr = NQKV // 2 // BN_QKV
    NA: tl.constexpr = HKV * NSPLIT
    NO: tl.constexpr = H // BN_O
    NG: tl.constexpr = INTER // BN_GU
    ND: tl.constexpr = H // BN_D
    PER: tl.constexpr = NQ + NA + NO + NG + ND
    l = t // PER
    r = t - l * PER
    kv_l = l * (HKV * S * D)
    if SUB:  # a launch of one layer's QKV, attention and O (t counted from the layer's first item)
        _front(t, emb, wqkv, wo, ln1, kc, vc, tok_ptr, pos_ptr, hs, q, att, part_o, part_ml, count, sync, eps,
               log2_theta, qk_scale, S, l, r, L, H, HQ, HKV, D, BN_QKV, BN_O, BK_QKV, BK_O, CHUNK, BLOCK_S, NSPLIT,
               UPCAST, EVICT, NSYNC, WAIT, ND, True)
    elif t >= L * PER:  # the LM head after the last layer's down
        b = t - L * PER
        gemv_rows(emb, hs + 2 * L * H, lnf, logits, logits, eps, b, H, True, False, BN_HEAD, BK_HEAD, WAIT, EVICT,
                  sync, 5 * L - 1, ND)
        last = signal_done(sync, 5 * L)
        if last == tl.num_programs(0) - L * PER - 1:  # every item is done
            _reset(sync, L, NSYNC)
    elif r < NQ + NA + NO:
        _front(t, emb, wqkv, wo, ln1, kc, vc, tok_ptr, pos_ptr, hs, q, att, part_o, part_ml, count, sync, eps,
               log2_theta, qk_scale, S, l, r, L, H, HQ, HKV, D, BN_QKV, BN_O, BK_QKV, BK_O, CHUNK, BLOCK_S, NSPLIT,
               UPCAST, EVICT, NSYNC, WAIT, ND, False)
    elif r < NQ + NA + NO + NG:
        pair_rows(wgu + l * (2 * INTER * H), hs + (2 * l + 1) * H, ln2 + l * H, act, kc, vc, pos_ptr, eps,
                  log2_theta, r - NQ - NA - NO, H, 0, 1, 0, 0, S, INTER, BN_GU, BK_GU, WAIT, EVICT,
                  sync, 5 * l + 2, NO)
        signal_done(sync, 5 * l + 3)
    else:
        gemv_rows(wd + l * (H * INTER), act, act, hs + (2 * l + 1) * H, hs + (2 * l + 2) * H, eps,
                  r - NQ - NA - NO - NG, INTER, False, True, BN_D, BK_D, WAIT, EVICT, sync, 5 * l + 3, NG)
        last = signal_done(sync, 5 * l + 4)
        if (l == L - 1) & (last == ND - 1) & (tl.num_programs(0) == L * PER):
            _reset(sync, L, NSYNC)  # the head is its own launch (head_launch), and every item is done


@triton.jit
def decode_dataflow_kernel(emb, wqkv, wo, wgu, wd, ln1, ln2, lnf, kc, vc, tok_ptr, pos_ptr, logits,
                           hs, q, att, act, part_o, part_ml, count, sync, eps, log2_theta, qk_scale, S, t0,
                           L: tl.constexpr, H: tl.constexpr, HQ: tl.constexpr, HKV: tl.constexpr, D: tl.constexpr,
                           INTER: tl.constexpr, BN_QKV: tl.constexpr, BN_O: tl.constexpr, BN_GU: tl.constexpr,
                           BN_D: tl.constexpr, BN_HEAD: tl.constexpr, BK_QKV: tl.constexpr, BK_O: tl.constexpr,
                           BK_GU: tl.constexpr, BK_D: tl.constexpr, BK_HEAD: tl.constexpr, CHUNK: tl.constexpr,
                           BLOCK_S: tl.constexpr, NSPLIT: tl.constexpr, UPCAST: tl.constexpr, EVICT: tl.constexpr,
                           NSYNC: tl.constexpr, TICKET: tl.constexpr, WAIT: tl.constexpr, SUB: tl.constexpr):
    """One program per item; TICKET: claim the item number atomically (else trust the launch order);
    WAIT 3: before waiting, also ask the L2 for the rest of the item's weights (columns past the
    BLOCK_K loaded) and, in attention, for the split's K/V (2: registers only). SUB: items t0.. of one layer's
    QKV, attention and O only (the rest of the layer is per-launch kernels)."""
    if TICKET:
        t = claim(sync)
    else:
        t = tl.program_id(0)
    _item(t0 + t, emb, wqkv, wo, wgu, wd, ln1, ln2, lnf, kc, vc, tok_ptr, pos_ptr, logits, hs, q, att, act, part_o,
          part_ml, count, sync, eps, log2_theta, qk_scale, S, L, H, HQ, HKV, D, INTER, BN_QKV, BN_O, BN_GU, BN_D,
          BN_HEAD, BK_QKV, BK_O, BK_GU, BK_D, BK_HEAD, CHUNK, BLOCK_S, NSPLIT, UPCAST, EVICT, NSYNC, WAIT, SUB)


class DataflowDecode:
    """Scratch and launch plan of one shape; call(out, emb, ..., token, pos) runs the step (arguments as
    suite/techniques/decode_step/triton_step.run's). rows / block_k: per item kind ("QKV", "O", "GU",
    "D", "HEAD") rows (pairs) per item and the K chunk loaded before the wait; ticket: claim items
    atomically (else in launch order, which the hardware follows but does not promise); ask_l2: before
    waiting, ask the L2 for the rest of the item's weights and an attention split's K/V; head_launch: the
    LM head as a second launch (triton_step's head GEMV) instead of items; maxnreg: a register cap per thread
    (more programs per SM, spills); front_only: per layer, QKV, attention and O as one item launch, gate/up
    and down as triton_step's per-launch GEMVs (then the head as head_launch)."""

    def __init__(self, L, H, hq, hkv, S, D, inter, V, device, num_warps: int = 4, rows: dict | None = None,
                 block_k: dict | None = None, ticket: bool = True, max_split: int = 64, evict: str = "",
                 ask_l2: bool = False, head_launch: bool = False, maxnreg: int | None = None,
                 front_only: bool = False):
        f32 = {"device": device, "dtype": torch.float32}
        self.hs, self.q = torch.empty(2 * L + 1, H, **f32), torch.empty(hq * D, **f32)
        self.att, self.act = torch.empty(hq * D, **f32), torch.empty(inter, **f32)
        self.chunk, self.nsplit = split_plan(S, 64, max_split, 1)
        self.part_o = torch.empty(hkv * self.nsplit * (hq // hkv) * D, **f32)
        self.part_ml = torch.empty(hkv * self.nsplit * (hq // hkv) * 2, **f32)
        self.count = torch.zeros(hkv, device=device, dtype=torch.int32)
        nsync = triton.next_power_of_2(5 * L + 3)
        self.sync = torch.zeros(nsync, device=device, dtype=torch.int32)
        nqkv = (hq + 2 * hkv) * D
        n_out = {"QKV": nqkv // 2, "O": H, "GU": inter, "D": H, "HEAD": V}
        k_of = {"QKV": H, "O": hq * D, "GU": H, "D": inter, "HEAD": H}
        want, bk = {**ROWS, **(rows or {})}, {**BLOCK_K, **(block_k or {})}
        if head_launch or front_only:  # the head branch is compiled but runs no item: keep its registers few
            want["HEAD"], bk["HEAD"] = 1, 256
        bn = {k: next(b for b in (16, 8, 4, 2, 1) if b <= want[k] and n % b == 0) for k, n in n_out.items()}
        self.items = {k: n_out[k] // bn[k] for k in bn}
        self.items["ATTN"] = hkv * self.nsplit
        per = sum(self.items[k] for k in ("QKV", "ATTN", "O", "GU", "D"))
        self.front_only = front_only
        self.head_launch = head_launch or front_only
        self.per, self.L = per, L
        self.grid = (self.items["QKV"] + self.items["ATTN"] + self.items["O"] if front_only
                     else L * per + (0 if self.head_launch else self.items["HEAD"]))
        self.meta = dict(L=L, H=H, HQ=hq, HKV=hkv, D=D, INTER=inter, **{f"BN_{k}": v for k, v in bn.items()},
                         **{f"BK_{k}": min(bk[k], k_of[k]) for k in bn}, CHUNK=self.chunk, BLOCK_S=64,
                         NSPLIT=self.nsplit, UPCAST=interpreting(), EVICT=evict, NSYNC=nsync,
                         TICKET=ticket, WAIT=3 if ask_l2 and not interpreting() else 2, SUB=front_only,
                         num_warps=num_warps,
                         **({"maxnreg": maxnreg} if maxnreg and not interpreting() else {}))
        self.S, self.D = S, D

    def __call__(self, out, emb, wqkv, wo, wgu, wd, ln1, ln2, lnf, k_cache, v_cache, token, pos) -> None:
        """out (V,) fp32 <- logits; K/V of every layer written at slot pos (see triton_step.run)."""
        args = (emb, wqkv, wo, wgu, wd, ln1, ln2, lnf, k_cache, v_cache, token, pos, out, self.hs, self.q, self.att,
                self.act, self.part_o, self.part_ml, self.count, self.sync, EPS, math.log2(THETA),
                math.log2(math.e) / math.sqrt(self.D), self.S)
        if not self.front_only:
            decode_dataflow_kernel[(self.grid,)](*args, 0, **self.meta)
        else:  # per layer: QKV, attention and O as one item launch, then triton_step's gate/up and down GEMVs
            hs = self.hs
            for l in range(self.L):
                decode_dataflow_kernel[(self.grid,)](*args, l * self.per, **self.meta)
                gemv_pair(self.act, wgu[l], hs[2 * l + 1], ln2[l], MODE_SWIGLU, eps=EPS, target_programs=528)
                gemv(hs[2 * l + 2], wd[l], self.act, res=hs[2 * l + 1], block_k=2048, target_programs=528)
        if self.head_launch:  # the per-launch head GEMV (16 rows x 1024 columns per program)
            gemv(out, emb, self.hs[-1], gain=lnf, eps=EPS, target_programs=528)

    def gave_up(self) -> int:
        """1 when a wait gave up since this plan was built (the step is then wrong), else 0."""
        return int(self.sync[1].item())
