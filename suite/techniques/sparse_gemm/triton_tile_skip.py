"""Block-sparse GEMM in Triton: out (M,N) bf16 = x (M,K) @ w^T, where each program walks only the
nonzero TILE x TILE tiles of its rows of w (a CSR list over tiles), so zero tiles cost nothing."""
from __future__ import annotations

import torch
import triton
import triton.language as tl

from suite.lib.interp import interpreting
from suite.lib.triton_dot import dot_acc, rounded_for_store
from suite.techniques.sparse_gemm.tiles import TILE


@triton.jit
def tile_skip_kernel(x_ptr, w_ptr, out_ptr, tile_ptr, tile_k, M, N, K,
                     sxm, sxk, swn, swk, som, son,
                     BM: tl.constexpr, BN: tl.constexpr, TILE: tl.constexpr, UPCAST: tl.constexpr):
    pid_m = tl.program_id(0)  # fastest: programs in flight share the same rows of w (L2 reuse)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, TILE)
    row_tile = pid_n * BN // TILE  # BN divides TILE: this program's rows lie in one row of tiles
    start = tl.load(tile_ptr + row_tile)
    stop = tl.load(tile_ptr + row_tile + 1)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for t in range(start, stop):
        k0 = tl.load(tile_k + t) * TILE
        a = tl.load(x_ptr + rm[:, None] * sxm + (k0 + rk)[None, :] * sxk, mask=rm[:, None] < M, other=0.0)
        b = tl.load(w_ptr + rn[None, :] * swn + (k0 + rk)[:, None] * swk)  # (TILE, BN): w^T's tile
        acc = dot_acc(acc, a, b, UPCAST)
    acc = rounded_for_store(acc, UPCAST)
    tl.store(out_ptr + rm[:, None] * som + rn[None, :] * son, acc.to(out_ptr.dtype.element_ty),
             mask=rm[:, None] < M)


def config(m: int) -> dict:
    """Tile heights and launch settings by M: decode (few rows) streams w with narrow programs to fill
    the SMs; prefill uses 128-row tiles so each w tile serves many rows."""
    if interpreting():
        return {"BM": 16, "BN": 32, "num_warps": 4, "num_stages": 1}
    if m <= 32:
        return {"BM": 16, "BN": 32, "num_warps": 4, "num_stages": 4}
    if m <= 128:
        return {"BM": 64, "BN": 64, "num_warps": 4, "num_stages": 4}
    return {"BM": 128, "BN": 64, "num_warps": 4, "num_stages": 4}


def run(out, x, w, tile_ptr, tile_k, **_) -> None:
    """out (M,N) bf16 = x (M,K) bf16 @ w (N,K) bf16 ^T over the tiles listed in tile_ptr/tile_k."""
    m, k = x.shape
    n = w.shape[0]
    cfg = config(m)
    grid = (triton.cdiv(m, cfg["BM"]), n // cfg["BN"])
    tile_skip_kernel[grid](x, w, out, tile_ptr, tile_k, m, n, k, x.stride(0), x.stride(1),
                           w.stride(0), w.stride(1), out.stride(0), out.stride(1), TILE=TILE,
                           UPCAST=interpreting(), **cfg)
