"""The whole batch-1 decode step as one persistent launch: a grid of co-resident programs walks the
layers, each stage (QKV + RoPE + cache write, split-KV attention with its merge, O + residual, gate/up
+ SwiGLU, down + residual, then the LM head) spread over the programs in blocks of rows, with a grid
barrier between stages instead of a kernel boundary. Before waiting at a barrier each program asks the
L2 for its share of the next stage's weights (suite/lib/l2_prefetch.py), so the DRAM streams while the
grid synchronises. The stage bodies are the per-launch kernels' (decode_gemv, decode_attention).

Under the interpreter (programs run one after another, so a barrier would never open) the same stages
run as one launch each (STAGE >= 0), in order; on a GPU that mode is the debugging path."""
from __future__ import annotations

import math

import torch
import triton
import triton.language as tl

from suite.lib.decode_attention import attn_mma_item, split_plan
from suite.lib.decode_gemv import embed_row, gemv_rows, pair_rows
from suite.lib.interp import interpreting
from suite.lib.llama import EPS, THETA
from suite.lib.l2_prefetch import prefetch_l2

QKV0, ATTN, OPROJ, GATE_UP, DOWN, QKV, HEAD = range(7)  # stage ids (QKV0: layer 0, input from the table)
ROWS = {"QKV": 4, "O": 4, "GU": 8, "D": 4, "HEAD": 16}  # rows (pairs) per block: ~16 x 1024 loads in flight


@triton.jit
def grid_sync(bar_ptr, target):
    """Wait until the arrival counter at bar_ptr reaches target (this program's arrival included).
    Never a hang: after 2^18 polls (a grid not all resident) it sets bar_ptr[1] and every later
    barrier passes at once, so the step finishes with a wrong result that the oracle catches."""
    tl.debug_barrier()  # every warp's stores issued before the release below
    seen = tl.atomic_add(bar_ptr, 1, sem="acq_rel", scope="gpu") + 1
    spins = tl.atomic_add(bar_ptr + 1, 0, sem="relaxed", scope="gpu") * 262144
    while (seen < target) & (spins < 262144):
        seen = tl.atomic_add(bar_ptr, 0, sem="acquire", scope="gpu")
        spins += 1
    if seen < target:
        tl.atomic_xchg(bar_ptr + 1, 1)
    tl.debug_barrier()


@triton.jit
def _stage(ST: tl.constexpr, l, pid, emb, wqkv, wo, wgu, wd, ln1, ln2, lnf, kc, vc, tok_ptr, pos_ptr, logits,
           hs, q, att, act, part_o, part_ml, count, eps, log2_theta, qk_scale, S, L,
           H: tl.constexpr, HQ: tl.constexpr, HKV: tl.constexpr, D: tl.constexpr, INTER: tl.constexpr,
           NPROG: tl.constexpr, NBLK_QKV: tl.constexpr, NBLK_O: tl.constexpr, NBLK_GU: tl.constexpr,
           NBLK_D: tl.constexpr, NBLK_HEAD: tl.constexpr, BN_QKV: tl.constexpr, BN_O: tl.constexpr,
           BN_GU: tl.constexpr, BN_D: tl.constexpr, BN_HEAD: tl.constexpr, BLOCK_K: tl.constexpr,
           CHUNK: tl.constexpr, BLOCK_S: tl.constexpr, NSPLIT: tl.constexpr, UPCAST: tl.constexpr,
           EVICT: tl.constexpr):
    """This program's share of stage ST of layer l (blocks pid, pid + NPROG, ...)."""
    NQKV: tl.constexpr = (HQ + 2 * HKV) * D
    kv_l = l * (HKV * S * D)
    if ST == 0:  # QKV0
        x = embed_row(emb, tok_ptr, hs, pid == 0, H, BLOCK_K)
        for b in range(pid, NBLK_QKV, NPROG):
            pair_rows(wqkv, x, ln1, q, kc, vc, pos_ptr, eps, log2_theta, b, H, 1, D // 2, HQ, HKV, S, NQKV // 2,
                      BN_QKV, BLOCK_K, False, EVICT)
    elif ST == 5:  # QKV
        for b in range(pid, NBLK_QKV, NPROG):
            pair_rows(wqkv + l * (NQKV * H), hs + 2 * l * H, ln1 + l * H, q, kc + kv_l, vc + kv_l, pos_ptr, eps,
                      log2_theta, b, H, 1, D // 2, HQ, HKV, S, NQKV // 2, BN_QKV, BLOCK_K, False, EVICT)
    elif ST == 1:  # ATTN
        for it in range(pid, HKV * NSPLIT, NPROG):
            attn_mma_item(q, kc + kv_l, vc + kv_l, pos_ptr, part_o, part_ml, count, att, S, qk_scale,
                          it // NSPLIT, it % NSPLIT, HQ // HKV, D, CHUNK, BLOCK_S, NSPLIT, UPCAST)
    elif ST == 2:  # OPROJ
        for b in range(pid, NBLK_O, NPROG):
            gemv_rows(wo + l * (H * HQ * D), att, att, hs + 2 * l * H, hs + (2 * l + 1) * H, eps, b, HQ * D,
                      False, True, BN_O, BLOCK_K, False, EVICT)
    elif ST == 3:  # GATE_UP
        for b in range(pid, NBLK_GU, NPROG):
            pair_rows(wgu + l * (2 * INTER * H), hs + (2 * l + 1) * H, ln2 + l * H, act, kc, vc, pos_ptr, eps,
                      log2_theta, b, H, 0, 1, 0, 0, S, INTER, BN_GU, BLOCK_K, False, EVICT)
    elif ST == 4:  # DOWN
        for b in range(pid, NBLK_D, NPROG):
            gemv_rows(wd + l * (H * INTER), act, act, hs + (2 * l + 1) * H, hs + (2 * l + 2) * H, eps, b, INTER,
                      False, True, BN_D, BLOCK_K, False, EVICT)
    else:  # HEAD
        for b in range(pid, NBLK_HEAD, NPROG):
            gemv_rows(emb, hs + 2 * L * H, lnf, logits, logits, eps, b, H, True, False, BN_HEAD, BLOCK_K,
                      False, EVICT)


@triton.jit
def _prefetch_next(ST: tl.constexpr, l, pid, wqkv, wo, wgu, wd, emb, gu_lines, wd_lines, head_lines, L,
                   H: tl.constexpr, QD: tl.constexpr, NQKV: tl.constexpr, INTER: tl.constexpr,
                   NPROG: tl.constexpr, PF: tl.constexpr):
    """Before the barrier in front of stage ST of layer l: this program's share of weights soon read
    (attention: the O weight; O: the first gu_lines of gate/up; gate/up: the next gu_lines; down: the
    first wd_lines of down; the next QKV: its whole weight, or the head's first head_lines)."""
    if ST == 1:
        prefetch_l2(wo + l * (H * QD), H * QD // 64, pid, NPROG, PF)
    elif ST == 2:
        prefetch_l2(wgu + l * (2 * INTER * H), gu_lines, pid, NPROG, PF)
    elif ST == 3:
        prefetch_l2(wgu + l * (2 * INTER * H) + gu_lines * 64, gu_lines, pid, NPROG, PF)
    elif ST == 4:
        prefetch_l2(wd + l * (H * INTER), wd_lines, pid, NPROG, PF)
    else:
        if l + 1 < L:
            prefetch_l2(wqkv + (l + 1) * (NQKV * H), NQKV * H // 64, pid, NPROG, PF)
        else:
            prefetch_l2(emb, head_lines, pid, NPROG, PF)


@triton.jit
def decode_persistent_kernel(emb, wqkv, wo, wgu, wd, ln1, ln2, lnf, kc, vc, tok_ptr, pos_ptr, logits,
                             hs, q, att, act, part_o, part_ml, count, bar, eps, log2_theta, qk_scale, S, L, layer,
                             gu_lines, wd_lines, head_lines,
                             H: tl.constexpr, HQ: tl.constexpr, HKV: tl.constexpr, D: tl.constexpr,
                             INTER: tl.constexpr, NPROG: tl.constexpr, NBLK_QKV: tl.constexpr,
                             NBLK_O: tl.constexpr, NBLK_GU: tl.constexpr, NBLK_D: tl.constexpr,
                             NBLK_HEAD: tl.constexpr, BN_QKV: tl.constexpr, BN_O: tl.constexpr,
                             BN_GU: tl.constexpr, BN_D: tl.constexpr, BN_HEAD: tl.constexpr,
                             BLOCK_K: tl.constexpr, CHUNK: tl.constexpr, BLOCK_S: tl.constexpr,
                             NSPLIT: tl.constexpr, UPCAST: tl.constexpr, EVICT: tl.constexpr,
                             PF: tl.constexpr, STAGE: tl.constexpr):
    """STAGE < 0: the whole step, grid barriers between stages (all NPROG programs co-resident).
    STAGE >= 0: that stage alone for `layer`."""
    pid = tl.program_id(0)
    if STAGE >= 0:
        _stage(STAGE, layer, pid, emb, wqkv, wo, wgu, wd, ln1, ln2, lnf, kc, vc, tok_ptr, pos_ptr, logits, hs, q,
               att, act, part_o, part_ml, count, eps, log2_theta, qk_scale, S, L, H, HQ, HKV, D, INTER, NPROG,
               NBLK_QKV, NBLK_O, NBLK_GU, NBLK_D, NBLK_HEAD, BN_QKV, BN_O, BN_GU, BN_D, BN_HEAD, BLOCK_K,
               CHUNK, BLOCK_S, NSPLIT, UPCAST, EVICT)
    else:
        NQKV: tl.constexpr = (HQ + 2 * HKV) * D
        n = 0
        _stage(0, 0, pid, emb, wqkv, wo, wgu, wd, ln1, ln2, lnf, kc, vc, tok_ptr, pos_ptr, logits, hs, q,
               att, act, part_o, part_ml, count, eps, log2_theta, qk_scale, S, L, H, HQ, HKV, D, INTER, NPROG,
               NBLK_QKV, NBLK_O, NBLK_GU, NBLK_D, NBLK_HEAD, BN_QKV, BN_O, BN_GU, BN_D, BN_HEAD, BLOCK_K,
               CHUNK, BLOCK_S, NSPLIT, UPCAST, EVICT)
        for l in range(L):
            for st in tl.static_range(1, 6):  # attention, O, gate/up, down, the next layer's QKV
                _prefetch_next(st, l, pid, wqkv, wo, wgu, wd, emb, gu_lines, wd_lines, head_lines, L, H, HQ * D,
                               NQKV, INTER, NPROG, PF)
                n += NPROG
                grid_sync(bar, n)
                lay = l
                go = l >= 0
                if st == 5:
                    lay = l + 1
                    go = l + 1 < L
                if go:
                    _stage(st, lay, pid, emb, wqkv, wo, wgu, wd, ln1, ln2, lnf, kc, vc, tok_ptr, pos_ptr,
                           logits, hs, q, att, act, part_o, part_ml, count, eps, log2_theta, qk_scale, S, L, H,
                           HQ, HKV, D, INTER, NPROG, NBLK_QKV, NBLK_O, NBLK_GU, NBLK_D, NBLK_HEAD, BN_QKV, BN_O,
                           BN_GU, BN_D, BN_HEAD, BLOCK_K, CHUNK, BLOCK_S, NSPLIT, UPCAST, EVICT)
        _stage(6, 0, pid, emb, wqkv, wo, wgu, wd, ln1, ln2, lnf, kc, vc, tok_ptr, pos_ptr, logits, hs, q,
               att, act, part_o, part_ml, count, eps, log2_theta, qk_scale, S, L, H, HQ, HKV, D, INTER, NPROG,
               NBLK_QKV, NBLK_O, NBLK_GU, NBLK_D, NBLK_HEAD, BN_QKV, BN_O, BN_GU, BN_D, BN_HEAD, BLOCK_K,
               CHUNK, BLOCK_S, NSPLIT, UPCAST, EVICT)


class PersistentDecode:
    """Scratch and launch plan of one shape; call(out, emb, ..., token, pos) runs the step (as
    suite/techniques/decode_step/triton_step.run's arguments). programs_per_sm: co-resident programs
    per SM (each has num_warps warps); prefetch MB: gate/up (twice, before O and before gate/up),
    down, head."""

    def __init__(self, L, H, hq, hkv, S, D, inter, V, device, programs_per_sm: int = 2, num_warps: int = 4,
                 block_k: int = 1024, gu_mb: float = 16.0, wd_mb: float = 16.0, head_mb: float = 16.0,
                 evict: str = "", prefetch: bool = True, rows: dict | None = None):
        f32 = {"device": device, "dtype": torch.float32}
        self.hs, self.q = torch.empty(2 * L + 1, H, **f32), torch.empty(hq * D, **f32)
        self.att, self.act = torch.empty(hq * D, **f32), torch.empty(inter, **f32)
        self.chunk, self.nsplit = split_plan(S, 64, 64, 1)
        self.part_o = torch.empty(hkv * self.nsplit * (hq // hkv) * D, **f32)
        self.part_ml = torch.empty(hkv * self.nsplit * (hq // hkv) * 2, **f32)
        self.count = torch.zeros(hkv, device=device, dtype=torch.int32)
        self.bar = torch.zeros(2, device=device, dtype=torch.int32)
        sms = torch.cuda.get_device_properties(device).multi_processor_count if str(device).startswith("cuda") else 2
        self.nprog = sms * programs_per_sm
        nqkv = (hq + 2 * hkv) * D
        n_out = {"QKV": nqkv // 2, "O": H, "GU": inter, "D": H, "HEAD": V}
        want = {**ROWS, **(rows or {})}
        bn = {k: next(b for b in (16, 8, 4, 2, 1) if b <= want[k] and n % b == 0) for k, n in n_out.items()}
        lines = lambda mb, cap: int(min(mb * 1e6, cap) // 128)  # noqa: E731
        self.meta = dict(H=H, HQ=hq, HKV=hkv, D=D, INTER=inter, NPROG=self.nprog,
                         **{f"BN_{k}": v for k, v in bn.items()}, **{f"NBLK_{k}": n_out[k] // bn[k] for k in bn},
                         BLOCK_K=min(block_k, H, hq * D, inter), CHUNK=self.chunk, BLOCK_S=64, NSPLIT=self.nsplit,
                         UPCAST=interpreting(), EVICT=evict, PF=int(prefetch and not interpreting()),
                         num_warps=num_warps)
        self.lines = (lines(gu_mb / 2, inter * H * 2), lines(wd_mb, H * inter * 2), lines(head_mb, V * H * 2))
        self.L, self.S, self.D = L, S, D
        self.checked, self.fit = False, {}

    def __call__(self, out, emb, wqkv, wo, wgu, wd, ln1, ln2, lnf, k_cache, v_cache, token, pos) -> None:
        """out (V,) fp32 <- logits; K/V of every layer written at slot pos (see triton_step.run)."""
        args = [emb, wqkv, wo, wgu, wd, ln1, ln2, lnf, k_cache, v_cache, token, pos, out, self.hs, self.q,
                self.att, self.act, self.part_o, self.part_ml, self.count, self.bar, EPS, math.log2(THETA),
                math.log2(math.e) / math.sqrt(self.D), self.S, self.L]
        if interpreting():  # stage by stage: programs run one after another, a barrier would never open
            plan = [(st if st or not l else 5, l) for l in range(self.L) for st in range(5)] + [(6, 0)]
            for st, l in plan:
                decode_persistent_kernel[(self.nprog,)](*args, l, *self.lines, **self.meta, STAGE=st)
            return
        if not self.checked:
            self._fit(args)
        self.bar.zero_()
        decode_persistent_kernel[(self.nprog,)](*args, 0, *self.lines, **self.meta, STAGE=-1)

    def _fit(self, args) -> None:
        """Compile, then keep the grid to what the SMs hold at once (registers, shared memory, warps):
        a barrier over programs that are not all resident would never open."""
        sms = torch.cuda.get_device_properties(self.hs.device).multi_processor_count
        while True:
            k = decode_persistent_kernel.warmup(*args, 0, *self.lines, **self.meta, STAGE=-1, grid=(self.nprog,))
            if hasattr(k, "_init_handles"):
                k._init_handles()
            warps = self.meta["num_warps"]
            per_warp = -(-k.n_regs * 32 // 256) * 256
            fits = min(65536 // (per_warp * warps), 64 // warps, 232448 // max(k.metadata.shared, 1))
            self.fit = {"n_regs": k.n_regs, "n_spills": getattr(k, "n_spills", None),
                        "shared": k.metadata.shared, "resident_per_sm": fits}
            if self.nprog <= fits * sms:
                break
            self.nprog = self.meta["NPROG"] = fits * sms
        self.checked = True
