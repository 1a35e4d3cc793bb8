"""Ozaki scheme on int8: fp64 operands cut into int8 slices under one power-of-two scale per row
of A / column of B; slice products are exact int32 GEMMs, summed in fp64 by weight 2**(-7(p+q))."""
from __future__ import annotations

import torch

SLICE_BITS = 7  # an int8 slice holds 7 magnitude bits (digits in [-127, 127])
# 127 * 127 * 131072 < 2**31: int32 sums of int8 products stay exact over chunks this long.
MAX_EXACT_K = 131072


def slices(x: torch.Tensor, s: int, dim: int) -> tuple[torch.Tensor, torch.Tensor]:
    """fp64 x (R,C) -> (s,R,C) int8 digits and int exponents e (max over `dim`, kept) with
    x = 2**e * (sum_p 2**(-7p) * D_p + rest), |rest| < 2**(-7s)."""
    amax = x.abs().amax(dim=dim, keepdim=True)
    _, e = torch.frexp(amax)  # amax = f * 2**e with f in [0.5, 1): |x| < 2**e
    e = torch.where(amax > 0, e, torch.zeros_like(e))
    r = torch.ldexp(x, -e.to(x.dtype))  # |r| < 1, exact
    digits = []
    for _ in range(s):
        r = r * 2.0 ** SLICE_BITS  # exact
        d = torch.trunc(r)  # |d| <= 127
        digits.append(d.to(torch.int8))
        r = r - d  # exact
    return torch.stack(digits), e


def pairs_for(s: int) -> dict[int, list[tuple[int, int]]]:
    """Slice pairs (p, q), 1-based, kept by the triangular scheme (p + q <= s + 1), by weight p + q."""
    return {d: [(p, d - p) for p in range(1, d) if p <= s and d - p <= s] for d in range(2, s + 2)}


def int_matmul_exact(a: torch.Tensor, b_t: torch.Tensor, mm) -> torch.Tensor:
    """a (M,K) int8 @ b_t.T ((N,K) int8, i.e. column-major B) exactly, as fp64 (M,N); `mm` is an
    int8 x int8 -> int32 GEMM; K is cut into chunks whose int32 sums cannot overflow."""
    K = a.shape[1]
    out = None
    for k0 in range(0, K, MAX_EXACT_K):
        part = mm(a[:, k0:k0 + MAX_EXACT_K], b_t[:, k0:k0 + MAX_EXACT_K].t()).to(torch.float64)
        out = part if out is None else out + part  # integers < 2**53: exact
    return out


def ozaki_matmul(a: torch.Tensor, b: torch.Tensor, s: int, mm) -> torch.Tensor:
    """fp64 a (M,K) @ b (K,N) -> fp64 (M,N) from s int8 slices per operand (s(s+1)/2 products).

    Products of equal weight are one GEMM over K-concatenated slices, so each weight costs one
    int32 -> fp64 pass; weights are summed smallest first."""
    da, ea = slices(a, s, dim=1)  # (s,M,K), (M,1)
    db, eb = slices(b, s, dim=0)  # (s,K,N), (1,N)
    db_t = db.transpose(1, 2).contiguous()  # (s,N,K): column-major slices of B
    acc = torch.zeros(a.shape[0], b.shape[1], dtype=torch.float64, device=a.device)
    for d, pairs in sorted(pairs_for(s).items(), reverse=True):
        a_cat = torch.cat([da[p - 1] for p, _ in pairs], dim=1)
        b_cat = torch.cat([db_t[q - 1] for _, q in pairs], dim=1)
        # times 2**(-7d) with a Python scalar: exact like ldexp, and no host-to-device copy of an
        # exponent tensor, which made the whole call impossible to capture in a CUDA graph
        acc += int_matmul_exact(a_cat, b_cat, mm) * 2.0 ** (-SLICE_BITS * d)
    return torch.ldexp(acc, (ea + eb).to(torch.float64))


def int_mm(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """int8 (M,K) @ int8 (K,N) -> int32 via torch._int_mm (cuBLASLt on the GPU; M > 16, K, N % 8 == 0)."""
    return torch._int_mm(a, b)


def exact_fp64_mm(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """The same int8 slice products as fp64 GEMMs (exact while K * 127**2 < 2**53), as int32-valued
    fp64: the plain, unfused run of the scheme's math."""
    return (a.double() @ b.double())
