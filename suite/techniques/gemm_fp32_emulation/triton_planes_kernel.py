"""Triton kernels for FP32 emulation over pre-split planes: a split kernel that writes hi/mid/lo
planes, and a GEMM that loads every plane tile once per K step and sums the scheme's products."""
from __future__ import annotations

import torch
import triton
import triton.language as tl

from suite.lib.interp import interpreting
from suite.lib.planes import SCHEMES

_NPROD = {"bf16x3": 3, "tf32x3": 3, "bf16x6": 6, "bf16x9": 9}


@triton.jit
def round_bf16(x):
    """fp32 -> nearest bf16 value (ties to even) kept in fp32, on the bit pattern (same on the
    GPU and in the interpreter, whose own fp32->bf16 cast truncates)."""
    bits = x.to(tl.uint32, bitcast=True)
    bits = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) << 16
    return bits.to(tl.float32, bitcast=True)


@triton.jit
def round_tf32(x):
    """fp32 -> nearest tf32 value (10 explicit mantissa bits, ties to even), kept in fp32."""
    bits = x.to(tl.uint32, bitcast=True)
    bits = ((bits + 0x0FFF + ((bits >> 13) & 1)) >> 13) << 13
    return bits.to(tl.float32, bitcast=True)


@triton.jit
def split_kernel(x_ptr, out_ptr, n, PIECES: tl.constexpr, TF32: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    rest = tl.load(x_ptr + offs, mask=mask, other=0)
    for p in tl.static_range(PIECES):
        if TF32:
            piece = round_tf32(rest)
        else:
            piece = round_bf16(rest)
        rest = rest - piece  # exact: piece is rest rounded to the leading bits
        if TF32:
            tl.store(out_ptr + p * n + offs, piece, mask=mask)
        else:  # the bf16 bit pattern, stored as int16 (the interpreter's bf16 cast flushes denormals)
            bits = piece.to(tl.uint32, bitcast=True) >> 16
            tl.store(out_ptr + p * n + offs, bits.to(tl.int16), mask=mask)


def split(x: torch.Tensor, scheme: str) -> torch.Tensor:
    """fp32 (R,C) -> planes (pieces,R,C): bf16 pieces, or tf32-valued fp32 pieces for tf32x3."""
    pieces = SCHEMES[scheme][0]
    tf32 = scheme.startswith("tf32")
    x = x.contiguous()
    planes = torch.empty((pieces, *x.shape), device=x.device,
                         dtype=torch.float32 if tf32 else torch.bfloat16)
    n = x.numel()
    block = triton.next_power_of_2(n) if interpreting() else 1024  # one program on the CPU
    split_kernel[(triton.cdiv(n, block),)](x, planes if tf32 else planes.view(torch.int16), n, PIECES=pieces, TF32=tf32, BLOCK=block,
                                           num_warps=4)
    return planes


@triton.jit
def _to_f32(x):
    """Piece tile -> fp32; int16 tiles hold bf16 bit patterns (interpreter: its casts flush denormals)."""
    if x.dtype == tl.int16:
        return (x.to(tl.uint16, bitcast=True).to(tl.uint32) << 16).to(tl.float32, bitcast=True)
    else:
        return x.to(tl.float32)


@triton.jit
def _mma(a, b, acc, UPCAST: tl.constexpr, TF32: tl.constexpr):
    if UPCAST:  # interpreter: bf16 dots are wrong there; bf16*bf16 products are exact in fp32
        return tl.dot(_to_f32(a), _to_f32(b), acc, input_precision="ieee")
    elif TF32:
        return tl.dot(a, b, acc, input_precision="tf32")
    else:
        return tl.dot(a, b, acc)


@triton.jit
def products(a0, a1, a2, b0, b1, b2, acc, NPROD: tl.constexpr, UPCAST: tl.constexpr,
             TF32: tl.constexpr):
    """acc + the scheme's piece products, smallest magnitude first and hi*hi last."""
    if NPROD == 9:
        acc = _mma(a2, b2, acc, UPCAST, TF32)
        acc = _mma(a1, b2, acc, UPCAST, TF32)
        acc = _mma(a2, b1, acc, UPCAST, TF32)
    if NPROD >= 6:
        acc = _mma(a0, b2, acc, UPCAST, TF32)
        acc = _mma(a2, b0, acc, UPCAST, TF32)
        acc = _mma(a1, b1, acc, UPCAST, TF32)
    acc = _mma(a0, b1, acc, UPCAST, TF32)
    acc = _mma(a1, b0, acc, UPCAST, TF32)
    acc = _mma(a0, b0, acc, UPCAST, TF32)
    return acc


# Hopper configs (BM, BN, BK, stages, warps) by (piece format, planes, per-step IEEE add). 8 warps =
# two warpgroups issuing wgmma on a 128-row tile; 4 warps on a 64-row tile let two CTAs share an SM
# (about 210 registers a thread, <= 110 KB of shared memory), so one CTA's wgmma waits overlap the
# other's work. Stages fill the shared memory with (BM + BN) x BK tiles of every plane.
_CHOICES = {
    ("bf16", 2, True): [(128, 128, 64, 3, 8), (64, 128, 32, 4, 4), (64, 128, 64, 2, 4)],
    ("bf16", 3, True): [(128, 128, 32, 4, 8), (128, 128, 64, 2, 8), (64, 128, 32, 3, 4)],
    ("tf32", 2, True): [(128, 128, 32, 3, 8), (128, 128, 16, 4, 8), (64, 128, 32, 2, 4)],
    ("bf16", 2, False): [(128, 256, 64, 2, 8), (128, 256, 32, 4, 8)],
    ("bf16", 3, False): [(128, 256, 32, 3, 8), (128, 128, 32, 4, 8)],
    ("tf32", 2, False): [(128, 128, 32, 3, 8)],
}


@triton.jit
def grouped_tile(M, N, BM: tl.constexpr, BN: tl.constexpr, GROUP_M: tl.constexpr):
    """(pid_m, pid_n) of this program in grouped order: GROUP_M row blocks walk the column blocks
    together, so B tiles stay in L2."""
    pid = tl.program_id(0)
    grid_m, grid_n = tl.cdiv(M, BM), tl.cdiv(N, BN)
    per_group = GROUP_M * grid_n
    first_m = (pid // per_group) * GROUP_M
    group_rows = min(grid_m - first_m, GROUP_M)
    return first_m + (pid % per_group) % group_rows, (pid % per_group) // group_rows


def configs_from(shapes, interp_bk: int) -> list[triton.Config]:
    """Autotune configs for (BM, BN, BK, stages, warps) shapes; one small config when interpreting."""
    if interpreting():
        return [triton.Config({"BM": 64, "BN": 64, "BK": interp_bk, "GROUP_M": 4}, num_warps=4, num_stages=1)]
    return [triton.Config({"BM": bm, "BN": bn, "BK": bk, "GROUP_M": 8}, num_stages=s, num_warps=w)
            for bm, bn, bk, s, w in sorted(set(shapes))]


def keep_listed(configs, want) -> list:
    """The configs whose (BM, BN, BK, stages, warps) are in `want` (the first one if none is)."""
    if interpreting():
        return configs
    keep = [c for c in configs
            if (c.kwargs["BM"], c.kwargs["BN"], c.kwargs["BK"], c.num_stages, c.num_warps) in set(want)]
    return keep or configs[:1]


def _configs() -> list[triton.Config]:
    return configs_from([shape for choice in _CHOICES.values() for shape in choice], interp_bk=64)


def _prune(configs, named_args, **kwargs):
    """The configs listed for this scheme in _CHOICES."""
    key = ("tf32" if kwargs.get("TF32") else "bf16", 2 if kwargs.get("NPROD") == 3 else 3,
           bool(kwargs.get("PROMOTE", True)))
    return keep_listed(configs, _CHOICES[key])


@triton.autotune(configs=_configs(), key=["M", "N", "K", "NPROD", "PROMOTE", "TF32"],
                 prune_configs_by={"early_config_prune": _prune})
@triton.heuristics({"EVEN_K": lambda args: args["K"] % args["BK"] == 0})
@triton.jit
def plane_gemm_kernel(a_ptr, b_ptr, c_ptr, M, N, K, a_plane, b_plane, sam, sak, sbk, sbn, scm, scn,
                      NPROD: tl.constexpr, PROMOTE: tl.constexpr, UPCAST: tl.constexpr,
                      TF32: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                      GROUP_M: tl.constexpr, EVEN_K: tl.constexpr):
    pid_m, pid_n = grouped_tile(M, N, BM, BN, GROUP_M)
    rm = (pid_m * BM + tl.arange(0, BM)) % M  # wrap instead of masking rows/cols; the store masks
    rn = (pid_n * BN + tl.arange(0, BN)) % N
    rk = tl.arange(0, BK)
    a_ptrs = a_ptr + rm[:, None] * sam + rk[None, :] * sak
    b_ptrs = b_ptr + rk[:, None] * sbk + rn[None, :] * sbn
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for kt in range(0, tl.cdiv(K, BK)):
        if EVEN_K:
            a0 = tl.load(a_ptrs)
            a1 = tl.load(a_ptrs + a_plane)
            b0 = tl.load(b_ptrs)
            b1 = tl.load(b_ptrs + b_plane)
        else:
            ka = rk[None, :] < K - kt * BK
            kb = rk[:, None] < K - kt * BK
            a0 = tl.load(a_ptrs, mask=ka, other=0)
            a1 = tl.load(a_ptrs + a_plane, mask=ka, other=0)
            b0 = tl.load(b_ptrs, mask=kb, other=0)
            b1 = tl.load(b_ptrs + b_plane, mask=kb, other=0)
        a2, b2 = a1, b1  # placeholders for two-piece schemes (not used by their products)
        if NPROD >= 6:
            if EVEN_K:
                a2 = tl.load(a_ptrs + 2 * a_plane)
                b2 = tl.load(b_ptrs + 2 * b_plane)
            else:
                a2 = tl.load(a_ptrs + 2 * a_plane, mask=ka, other=0)
                b2 = tl.load(b_ptrs + 2 * b_plane, mask=kb, other=0)
        if PROMOTE:
            # A short tensor-core chain per K step in a fresh accumulator, then one IEEE fp32 add:
            # long chains in the tensor core's accumulator lose accuracy.
            part = tl.zeros((BM, BN), dtype=tl.float32)
            part = products(a0, a1, a2, b0, b1, b2, part, NPROD, UPCAST, TF32)
            acc += part
        else:
            acc = products(a0, a1, a2, b0, b1, b2, acc, NPROD, UPCAST, TF32)
        a_ptrs += BK * sak
        b_ptrs += BK * sbk
    cm = pid_m * BM + tl.arange(0, BM)
    cn = pid_n * BN + tl.arange(0, BN)
    tl.store(c_ptr + cm[:, None] * scm + cn[None, :] * scn, acc,
             mask=(cm[:, None] < M) & (cn[None, :] < N))


def gemm(pa: torch.Tensor, pb: torch.Tensor, out: torch.Tensor, scheme: str, promote: bool = True) -> None:
    """out (M,N) fp32 = sum of the scheme's products of planes pa (P,M,K) and pb (P,K,N)."""
    _, M, K = pa.shape
    N = pb.shape[2]
    if interpreting() and pa.dtype == torch.bfloat16:
        pa, pb = pa.view(torch.int16), pb.view(torch.int16)
    grid = lambda meta: (triton.cdiv(M, meta["BM"]) * triton.cdiv(N, meta["BN"]),)
    plane_gemm_kernel[grid](pa, pb, out, M, N, K, pa.stride(0), pb.stride(0), pa.stride(1),
                            pa.stride(2), pb.stride(1), pb.stride(2), out.stride(0), out.stride(1),
                            NPROD=_NPROD[scheme], PROMOTE=promote, UPCAST=interpreting(),
                            TF32=scheme.startswith("tf32"))
