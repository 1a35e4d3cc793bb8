"""Triton GEMM that loads fp32 tiles and splits them into bf16 pieces in registers (no planes in
memory), then sums the scheme's piece products per K step; the in-register counterpart of the
plane kernel."""
from __future__ import annotations

import torch
import triton
import triton.language as tl

from suite.lib.interp import interpreting
from suite.techniques.gemm_fp32_emulation.triton_tiles import (compile_only, configs_from, grouped_tile,
                                                                     products, round_bf16)

_NPROD = {"bf16x3": 3, "bf16x6": 6, "bf16x9": 9}


@triton.jit
def _pieces(x, PIECES: tl.constexpr, UPCAST: tl.constexpr):
    """fp32 tile -> three bf16 tiles (fp32-valued under the interpreter): (hi, mid, lo), or for a
    two-piece split (hi, lo, lo) with the last one a placeholder."""
    hi = round_bf16(x)
    rest = x - hi
    mid = round_bf16(rest)
    lo = mid
    if PIECES == 3:
        lo = round_bf16(rest - mid)
    if not UPCAST:
        hi = hi.to(tl.bfloat16)
        mid = mid.to(tl.bfloat16)
        lo = lo.to(tl.bfloat16)
    return hi, mid, lo


def autotune_configs() -> list[triton.Config]:
    # fp32 tiles in shared memory (4 bytes an element), the bf16 pieces of B staged there too.
    return configs_from([(128, 128, 32, 3, 8), (128, 128, 64, 2, 8)], interp_bk=64)


@triton.autotune(configs=autotune_configs(), key=["M", "N", "K", "NPROD"])
@triton.heuristics({"EVEN_K": lambda args: args["K"] % args["BK"] == 0})
@triton.jit
def regsplit_gemm_kernel(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn,
                         NPROD: tl.constexpr, PIECES: tl.constexpr, UPCAST: tl.constexpr,
                         BM: tl.constexpr,
                         BN: tl.constexpr, BK: tl.constexpr, GROUP_M: tl.constexpr,
                         EVEN_K: tl.constexpr):
    pid_m, pid_n = grouped_tile(M, N, BM, BN, GROUP_M)
    rm = (pid_m * BM + tl.arange(0, BM)) % M
    rn = (pid_n * BN + tl.arange(0, BN)) % N
    rk = tl.arange(0, BK)
    a_ptrs = a_ptr + rm[:, None] * sam + rk[None, :] * sak
    b_ptrs = b_ptr + rk[:, None] * sbk + rn[None, :] * sbn
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for kt in range(0, tl.cdiv(K, BK)):
        if EVEN_K:
            a = tl.load(a_ptrs)
            b = tl.load(b_ptrs)
        else:
            a = tl.load(a_ptrs, mask=rk[None, :] < K - kt * BK, other=0.0)
            b = tl.load(b_ptrs, mask=rk[:, None] < K - kt * BK, other=0.0)
        a0, a1, a2 = _pieces(a, PIECES, UPCAST)
        b0, b1, b2 = _pieces(b, PIECES, UPCAST)
        # Two-piece split: the second piece ("lo") sits in the mid slot, as products() expects.
        part = products(a0, a1, a2, b0, b1, b2, tl.zeros((BM, BN), dtype=tl.float32), NPROD,
                        UPCAST, False)
        acc += part  # IEEE fp32 add of each K step's short tensor-core chain
        a_ptrs += BK * sak
        b_ptrs += BK * sbk
    cm = pid_m * BM + tl.arange(0, BM)
    cn = pid_n * BN + tl.arange(0, BN)
    tl.store(c_ptr + cm[:, None] * scm + cn[None, :] * scn, acc,
             mask=(cm[:, None] < M) & (cn[None, :] < N))


def _kernel_args(a, b, out, scheme: str) -> dict:
    """regsplit_gemm_kernel's arguments by name (autotuned ones left out)."""
    M, K = a.shape
    return dict(a_ptr=a, b_ptr=b, c_ptr=out, M=M, N=b.shape[1], K=K, sam=a.stride(0), sak=a.stride(1),
                sbk=b.stride(0), sbn=b.stride(1), scm=out.stride(0), scn=out.stride(1), NPROD=_NPROD[scheme],
                PIECES=2 if scheme == "bf16x3" else 3, UPCAST=interpreting())


def launch(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor, scheme: str) -> None:
    """out (M,N) fp32 = a (M,K) fp32 @ b (K,N) fp32 under `scheme`, split in registers."""
    M, N = out.shape
    grid = lambda meta: (triton.cdiv(M, meta["BM"]) * triton.cdiv(N, meta["BN"]),)
    regsplit_gemm_kernel[grid](**_kernel_args(a, b, out, scheme))


def compile_for(config: triton.Config, scheme: str, n: int = 256, device: str = "cuda") -> None:
    """Compile one config of a variant on (n, n) operands (n % 16 == 0, as every GPU case), no launch."""
    x = torch.empty(n, n, device=device)
    compile_only(regsplit_gemm_kernel, config, _kernel_args(x, x, x, scheme))


def run(out: torch.Tensor, a: torch.Tensor, b: torch.Tensor, scheme: str) -> None:
    """out (M,N) fp32 = a (M,K) fp32 @ b (K,N) fp32, each fp32 tile split into bf16 in registers."""
    launch(a, b, out, scheme)
