"""W4A16 GEMM in Triton: out (M,N) bf16 = a (M,K) bf16 @ (q * s)^T, the 4-bit weights unpacked and
dequantized in the mainloop (never written back to memory), with split-K for small M.

Split-K is serial: each of SPLIT_K programs of an output tile writes its fp32 partial to a
workspace and bumps the tile's counter; the last to arrive sums the partials, writes the bf16 tile
and resets the counter. One launch, no memset or reduction kernel: at M <= 16 the whole GEMM is a
few microseconds of weight streaming, where two extra launches would cost as much as the work."""
from __future__ import annotations

import torch
import triton
import triton.language as tl

from suite.lib.int4_triton import bias_bf16
from suite.lib.interp import interpreting
from suite.lib.triton_round import round_bf16


@triton.jit
def w4a16_kernel(a_ptr, qw_ptr, s_ptr, c_ptr, ws_ptr, lock_ptr, M, N, K,
                 sam, sak, sqk, sqn, ssg, ssn, scm, scn, M_BUCKET,
                 GROUP: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                 SPLIT_K: tl.constexpr, BIAS: tl.constexpr, GATHER: tl.constexpr, UPCAST: tl.constexpr):
    pid_n = tl.program_id(0)
    pid_m = tl.program_id(1)
    pid_k = tl.program_id(2)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    # Nibble j of packed word i is k = 8 i + j: load each word once, shift it 8 ways, interleave.
    rw = tl.arange(0, BK // 8)
    shifts = 4 * tl.arange(0, 8)
    k_steps = tl.cdiv(K, BK)
    per_split = tl.cdiv(k_steps, SPLIT_K)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for step in range(pid_k * per_split, tl.minimum((pid_k + 1) * per_split, k_steps)):
        k0 = step * BK
        a = tl.load(a_ptr + rm[:, None] * sam + (k0 + rk)[None, :] * sak,
                    mask=(rm[:, None] < M) & ((k0 + rk)[None, :] < K), other=0.0)
        if GATHER:  # each (k, n) loads its own word (8 loads of each, from L1) and shifts it
            kk = k0 + rk
            words = tl.load(qw_ptr + (kk // 8)[:, None] * sqk + rn[None, :] * sqn,
                            mask=(kk[:, None] < K) & (rn[None, :] < N), other=0)
            codes = (words >> ((kk % 8) * 4)[:, None]) & 0xF
        else:
            words = tl.load(qw_ptr + (k0 // 8 + rw)[:, None] * sqk + rn[None, :] * sqn,
                            mask=((k0 // 8 + rw)[:, None] < K // 8) & (rn[None, :] < N), other=0)
            nib = (words[:, None, :] >> shifts[None, :, None]) & 0xF  # (BK/8, 8, BN)
            codes = tl.reshape(nib, (BK, BN))  # q + 8, in 0..15
        # BK divides GROUP: one scale row per K step.
        s = tl.load(s_ptr + (k0 // GROUP) * ssg + rn * ssn, mask=rn < N, other=0.0).to(tl.float32)
        if BIAS:
            # 0x4300 | c is the bf16 bit pattern of 128 + c (7 mantissa bits hold c): bf16 weights
            # q + 136 with no conversion instruction. a @ (q + 136) - 136 * rowsum(a) = a @ q,
            # exact products; the group scale multiplies the step's partial product.
            if UPCAST:  # the interpreter's bf16 dot is wrong; these products are exact in fp32
                p = tl.dot(a.to(tl.float32), (codes + 128).to(tl.float32), input_precision="ieee")
            else:
                p = tl.dot(a, bias_bf16(codes))
            acc += (p - 136.0 * tl.sum(a.to(tl.float32), 1)[:, None]) * s[None, :]
        else:
            # 0x4B000000 | c is the fp32 bit pattern of 2^23 + c: q in fp32 by one add, no I2F.
            q = (codes | 0x4B000000).to(tl.float32, bitcast=True) - 8388616.0
            w = q * s[None, :]  # rounded to bf16 below, as dequantize-to-bf16 does
            if UPCAST:  # the interpreter's bf16 dot is wrong (and its cast truncates)
                acc += tl.dot(a.to(tl.float32), round_bf16(w), input_precision="ieee")
            else:
                acc += tl.dot(a, w.to(tl.bfloat16))
    c_mask = (rm[:, None] < M) & (rn[None, :] < N)
    c_ptrs = c_ptr + rm[:, None] * scm + rn[None, :] * scn
    if SPLIT_K == 1:
        tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=c_mask)
    else:
        tile = pid_m * tl.num_programs(0) + pid_n
        local = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
        tl.store(ws_ptr + (tile * SPLIT_K + pid_k) * BM * BN + local, acc, cache_modifier=".cg")
        tl.debug_barrier()  # every thread's partial is stored before the counter moves
        arrived = tl.atomic_add(lock_ptr + tile, 1, sem="acq_rel")
        if arrived == SPLIT_K - 1:  # the last program of this tile reduces it
            total = tl.zeros((BM, BN), dtype=tl.float32)
            for part in range(SPLIT_K):
                total += tl.load(ws_ptr + (tile * SPLIT_K + part) * BM * BN + local, cache_modifier=".cg")
            tl.store(c_ptrs, total.to(c_ptr.dtype.element_ty), mask=c_mask)
            tl.atomic_xchg(lock_ptr + tile, 0)  # ready for the next call


def _cfg(bm, bn, bk, split, warps, stages, bias=True) -> triton.Config:
    return triton.Config({"BM": bm, "BN": bn, "BK": bk, "SPLIT_K": split, "BIAS": bias},
                         num_warps=warps, num_stages=stages)


# Small M: the GEMM streams N*K/2 bytes of weights, so the configs trade tile width against
# programs in flight (split-K fills 132 SMs when N / BN alone does not); the unpacking must keep up
# with HBM, hence the bias path (integer ops only per weight, the scale on the 16-row product).
SMALL_M = [_cfg(bm, bn, bk, sp, w, st) for bm in (16, 64)
           for bn, bk, sp, w, st in ((64, 128, 1, 4, 4), (64, 128, 2, 4, 4), (64, 128, 4, 4, 4),
                                     (32, 128, 4, 4, 4), (128, 128, 2, 4, 4), (128, 128, 4, 8, 3),
                                     (64, 64, 8, 4, 4), (32, 128, 8, 4, 3))]
# Large M: the per-step scaling of the bias path costs BM x BN per step, the converted weights
# BK x BN shared by all BM rows; the autotuner picks.
LARGE_M = [_cfg(bm, bn, bk, 1, w, st, bias) for bias in (True, False)
           for bm, bn, bk, w, st in ((128, 128, 128, 8, 3), (128, 256, 64, 8, 3), (64, 128, 128, 4, 4),
                                     (256, 128, 64, 8, 3))]
# Under the interpreter (no autotuning there): split-K at small M, so CI runs both paths.
INTERP_SMALL_M = {"BM": 16, "BN": 32, "BK": 64, "SPLIT_K": 2, "BIAS": True}
INTERP_LARGE_M = {"BM": 32, "BN": 32, "BK": 64, "SPLIT_K": 1, "BIAS": False}


def _prune(configs, named_args, **kwargs):
    """Tile heights that fit M: BM = 16 up to M = 16, 64 up to 64; wider tiles beyond."""
    bucket = named_args["M_BUCKET"]
    return [c for c in configs if c.kwargs["BM"] == bucket] or configs


_KEY = ["M_BUCKET", "N", "K", "GATHER"]
small_m = triton.autotune(SMALL_M, key=_KEY, prune_configs_by={"early_config_prune": _prune})(w4a16_kernel)
large_m = triton.autotune(LARGE_M, key=_KEY)(w4a16_kernel)

_SCRATCH: dict[tuple, tuple[torch.Tensor, torch.Tensor]] = {}


def scratch(m: int, n: int, device) -> tuple[torch.Tensor, torch.Tensor]:
    """Split-K workspace (fp32) and per-tile counters (int32, zero between calls), kept per shape
    so that a call allocates nothing (and can be captured in a CUDA graph)."""
    key = (str(device), m, n)
    if key not in _SCRATCH:
        tiles_cap = (triton.cdiv(m, 16) + 1) * (triton.cdiv(n, 32) + 1)
        ws = torch.empty(8 * (m + 64) * (n + 128), device=device, dtype=torch.float32)
        _SCRATCH[key] = ws, torch.zeros(tiles_cap, device=device, dtype=torch.int32)
    return _SCRATCH[key]


def launch(out, a, qweight, scales, gather: bool = False, kernel=None, **config) -> None:
    """out (M,N) bf16 = a (M,K) bf16 @ W^T, W (N,K) = int4 codes of qweight (K/8, N) int32 x
    scales (K/G, N) fp16; `kernel` an autotuned variant, or the plain kernel with `config` given.
    config BIAS: bf16 weights q + 136 built from the code bits, the scale on each step's partial
    product; else q * s in fp32 rounded to bf16 (the unfused path's very weights).
    gather: each weight loads its own packed word and shifts it (no interleaving reshape)."""
    m, k = a.shape
    n = qweight.shape[1]
    group = k // scales.shape[0]
    interp_run = interpreting()
    if kernel is None and interp_run:
        kernel, config = w4a16_kernel, INTERP_SMALL_M if m <= 16 else INTERP_LARGE_M
    elif kernel is None:
        kernel = small_m if m <= 64 else large_m
    bucket = 16 if m <= 16 else (64 if m <= 64 else 128)
    ws, locks = scratch(m, n, a.device)
    # fp32 scratch under the interpreter, rounded by torch: its fp32 -> bf16 store truncates.
    dst = torch.empty(m, n, device=a.device, dtype=torch.float32) if interp_run else out
    grid = lambda meta: (triton.cdiv(n, meta["BN"]), triton.cdiv(m, meta["BM"]), meta["SPLIT_K"])
    kernel[grid](a, qweight, scales, dst, ws, locks, m, n, k, *a.stride(), *qweight.stride(),
                 *scales.stride(), *dst.stride(), bucket, GROUP=group, GATHER=gather, UPCAST=interp_run, **config)
    if interp_run:
        out.copy_(dst)


def run(out, a, qweight, scales, w_bf16=None, qweight_k16=None, gather: bool = False) -> None:
    """out (M,N) bf16 = a (M,K) bf16 @ dequant(qweight (K/8,N) int32, scales (K/G,N) fp16)^T, fused."""
    launch(out, a, qweight, scales, gather)
