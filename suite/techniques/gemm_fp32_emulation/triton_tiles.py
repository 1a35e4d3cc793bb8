"""Triton pieces shared by the FP32-emulation GEMMs: the split kernel that writes hi/mid/lo planes,
plane rounding, the product set of a scheme on tiles, grouped tile order and autotune configs."""
from __future__ import annotations

import torch
import triton
import triton.language as tl

from suite.lib.interp import interpreting
from suite.lib.planes import SCHEMES


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
def to_f32(x):
    """Piece tile -> fp32; int16 tiles hold bf16 bit patterns (interpreter: its casts flush denormals)."""
    if x.dtype == tl.int16:
        return (x.to(tl.uint16, bitcast=True).to(tl.uint32) << 16).to(tl.float32, bitcast=True)
    else:
        return x.to(tl.float32)


@triton.jit
def mma(a, b, acc, UPCAST: tl.constexpr, TF32: tl.constexpr):
    if UPCAST:  # interpreter: bf16 dots are wrong there; bf16*bf16 products are exact in fp32
        return tl.dot(to_f32(a), to_f32(b), acc, input_precision="ieee")
    elif TF32:
        return tl.dot(a, b, acc, input_precision="tf32")
    else:
        return tl.dot(a, b, acc)


@triton.jit
def products(a0, a1, a2, b0, b1, b2, acc, NPROD: tl.constexpr, UPCAST: tl.constexpr,
             TF32: tl.constexpr):
    """acc + the scheme's piece products, smallest magnitude first and hi*hi last."""
    if NPROD == 9:
        acc = mma(a2, b2, acc, UPCAST, TF32)
        acc = mma(a1, b2, acc, UPCAST, TF32)
        acc = mma(a2, b1, acc, UPCAST, TF32)
    if NPROD >= 6:
        acc = mma(a0, b2, acc, UPCAST, TF32)
        acc = mma(a2, b0, acc, UPCAST, TF32)
        acc = mma(a1, b1, acc, UPCAST, TF32)
    acc = mma(a0, b1, acc, UPCAST, TF32)
    acc = mma(a1, b0, acc, UPCAST, TF32)
    acc = mma(a0, b0, acc, UPCAST, TF32)
    return acc


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


def compile_only(kernel, config: triton.Config, args: dict) -> None:
    """Compile an autotuned kernel for one of its configs with these named arguments, without a
    launch (fills Triton's cache)."""
    kernel.fn.warmup(grid=(1,), **args, **config.all_kwargs())


def keep_listed(configs, want) -> list:
    """The configs whose (BM, BN, BK, stages, warps) are in `want` (the first one if none is)."""
    if interpreting():
        return configs
    keep = [c for c in configs
            if (c.kwargs["BM"], c.kwargs["BN"], c.kwargs["BK"], c.num_stages, c.num_warps) in set(want)]
    return keep or configs[:1]
