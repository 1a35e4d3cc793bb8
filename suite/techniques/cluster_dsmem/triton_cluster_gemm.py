"""A tiled bf16 GEMM in Triton, launched with and without thread-block clusters: out (M,N) = x (M,K)
@ w (N,K)^T. Triton 3.6 reaches clusters only through `num_ctas` (SM90+): the launch groups num_ctas
CTAs into a cluster and the compiler splits each program's tile across them (its CTA layout); the
language has no operation that names another CTA's shared memory, so whether tiles travel through
distributed shared memory is the compiler's choice (probe.py counts the cluster instructions in the PTX)."""
from __future__ import annotations

import torch
import triton
import triton.language as tl

from suite.lib.interp import interpreting
from suite.lib.triton_dot import dot_acc, rounded_for_store

COMPILED: dict[int, object] = {}  # num_ctas -> the last compiled kernel (for the probe)


@triton.jit
def gemm_kernel(x_ptr, w_ptr, out_ptr, M, N, K, sxm, sxk, swn, swk, som, son,
                BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GROUP_M: tl.constexpr,
                UPCAST: tl.constexpr):
    pid = tl.program_id(0)
    # Grouped order: GROUP_M row-tiles share each column of w while they are in flight (L2 reuse).
    tiles_m, tiles_n = tl.cdiv(M, BM), tl.cdiv(N, BN)
    group = pid // (GROUP_M * tiles_n)
    first_m = group * GROUP_M
    rows = tl.minimum(tiles_m - first_m, GROUP_M)
    pid_m = first_m + (pid % (GROUP_M * tiles_n)) % rows
    pid_n = (pid % (GROUP_M * tiles_n)) // rows
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        a = tl.load(x_ptr + rm[:, None] * sxm + (k0 + rk)[None, :] * sxk,
                    mask=(rm[:, None] < M) & ((k0 + rk)[None, :] < K), other=0.0)
        b = tl.load(w_ptr + rn[None, :] * swn + (k0 + rk)[:, None] * swk,
                    mask=(rn[None, :] < N) & ((k0 + rk)[:, None] < K), other=0.0)
        acc = dot_acc(acc, a, b, UPCAST)
    acc = rounded_for_store(acc, UPCAST)
    tl.store(out_ptr + rm[:, None] * som + rn[None, :] * son, acc.to(out_ptr.dtype.element_ty),
             mask=(rm[:, None] < M) & (rn[None, :] < N))


def run(out, x, w, num_ctas: int = 1) -> None:
    """out (M,N) bf16 = x (M,K) bf16 @ w (N,K) bf16 ^T, 128x128x64 tiles, clusters of num_ctas CTAs."""
    m, k = x.shape
    n = w.shape[0]
    tile = {"BM": 32, "BN": 32, "BK": 32} if interpreting() else {"BM": 128, "BN": 128, "BK": 64}
    grid = (triton.cdiv(m, tile["BM"]) * triton.cdiv(n, tile["BN"]),)
    COMPILED[num_ctas] = gemm_kernel[grid](
        x, w, out, m, n, k, x.stride(0), x.stride(1), w.stride(0), w.stride(1), out.stride(0), out.stride(1),
        GROUP_M=8, UPCAST=interpreting(), num_warps=8, num_stages=3, num_ctas=num_ctas, **tile)


def cublas(out, x, w) -> None:
    """out (M,N) bf16 = x @ w^T by torch.mm (cuBLAS): the ceiling the Triton kernels are read against."""
    torch.mm(x, w.t(), out=out)
