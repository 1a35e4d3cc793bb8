"""A plain autotuned Triton GEMM for fp32 operands, parametrised by tl.dot's input_precision."""
from __future__ import annotations

import torch
import triton
import triton.language as tl

from suite.lib.interp import interpreting
from suite.techniques.gemm_fp32_emulation.triton_tiles import compile_only


def autotune_configs() -> list[triton.Config]:
    if interpreting():
        return [triton.Config({"BM": 32, "BN": 32, "BK": 32}, num_warps=4, num_stages=1)]
    shapes = [(128, 128, 32, 4, 8), (128, 128, 64, 3, 8), (128, 256, 32, 3, 8),
              (64, 128, 32, 4, 4), (256, 128, 32, 3, 8)]
    return [triton.Config({"BM": bm, "BN": bn, "BK": bk}, num_stages=s, num_warps=w)
            for bm, bn, bk, s, w in shapes]


@triton.autotune(configs=autotune_configs(), key=["M", "N", "K", "PRECISION"])
@triton.jit
def gemm_kernel(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn,
                PRECISION: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for kt in range(0, tl.cdiv(K, BK)):
        kk = kt * BK + rk
        a = tl.load(a_ptr + rm[:, None] * sam + kk[None, :] * sak,
                    mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0)
        b = tl.load(b_ptr + kk[:, None] * sbk + rn[None, :] * sbn,
                    mask=(kk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc, input_precision=PRECISION)
    tl.store(c_ptr + rm[:, None] * scm + rn[None, :] * scn, acc,
             mask=(rm[:, None] < M) & (rn[None, :] < N))


def _kernel_args(a, b, out, precision: str) -> dict:
    """gemm_kernel's arguments by name (autotuned ones left out)."""
    M, K = a.shape
    return dict(a_ptr=a, b_ptr=b, c_ptr=out, M=M, N=b.shape[1], K=K, sam=a.stride(0), sak=a.stride(1),
                sbk=b.stride(0), sbn=b.stride(1), scm=out.stride(0), scn=out.stride(1), PRECISION=precision)


def launch(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor, precision: str) -> None:
    """out (M,N) fp32 = a (M,K) fp32 @ b (K,N) fp32."""
    M, N = out.shape
    if interpreting():
        precision = "ieee"  # the interpreter computes fp32 dots in numpy; precision is moot there
    grid = lambda meta: (triton.cdiv(M, meta["BM"]), triton.cdiv(N, meta["BN"]))
    gemm_kernel[grid](**_kernel_args(a, b, out, precision))


def compile_for(config: triton.Config, precision: str, n: int = 256, device: str = "cuda") -> None:
    """Compile one config of a variant on (n, n) operands (n % 16 == 0, as every GPU case), no launch."""
    x = torch.empty(n, n, device=device)
    compile_only(gemm_kernel, config, _kernel_args(x, x, x, precision))


def run(out: torch.Tensor, a: torch.Tensor, b: torch.Tensor, precision: str) -> None:
    """out (M,N) fp32 = a (M,K) fp32 @ b (K,N) fp32 with tl.dot(input_precision=precision)."""
    launch(a, b, out, precision)
