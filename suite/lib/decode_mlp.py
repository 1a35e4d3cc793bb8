"""The decode MLP as one launch: gate/up GEMV with the RMSNorm prologue and SwiGLU, then each
program's slice of the down GEMV, added into the residual stream with fp32 atomics.

A program owns BLOCK_N rows j of the SwiGLU output h = silu(W_g x) * (W_u x). Because down is linear,
y = x_res + W_d h = x_res + sum over programs of W_d[:, j-block] h[j-block]: each program streams
its (H x BLOCK_N) slab of W_d right after its gate/up rows and adds its partial y with `atomic_add`
into `out`, which the O launch has already set to the residual (gemv(..., out2=out)). The launch
boundary between gate/up and down goes, and with it down's own ramp-up and tail: the MLP's 100 MB
stream as one launch. The order of the atomic adds is not fixed, so the last bits of y may differ
between runs (fp32 sums of 8192 / BLOCK_N partials). W_d is read either as stored, (H, I) row-major
(a BLOCK_N-wide column slab: BLOCK_N x 2 bytes of each row), or transposed, (I, H) row-major (a
contiguous row block)."""
from __future__ import annotations

import triton
import triton.language as tl

from suite.lib.decode_gemv import _rows_dot
from suite.lib.interp import interpreting


@triton.jit
def mlp_kernel(wgu_ptr, x_ptr, g_ptr, wd_ptr, out_ptr, eps, H: tl.constexpr, INTER: tl.constexpr,
               BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, BLOCK_D: tl.constexpr, SD_J: tl.constexpr,
               SD_N: tl.constexpr, EVICT: tl.constexpr):
    """out[n] += sum_j W_d[n, j] h[j] over this program's j; h = silu(rstd W_g (x*g)) * rstd W_u (x*g);
    W_d[n, j] at wd_ptr + j*SD_J + n*SD_N; wgu (2*INTER, H) = [gate; up] bf16, x (H,) fp32, g (H,) bf16."""
    j = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    a, b, ssq = _rows_dot(wgu_ptr, j, j + INTER, x_ptr, g_ptr, H, BLOCK_N, BLOCK_K, True, True, 0, EVICT)
    rstd = tl.math.rsqrt(ssq / H + eps)
    a = a * rstd
    h = a / (1 + tl.exp(-a)) * (b * rstd)
    for n0 in tl.static_range(0, H, BLOCK_D):
        n = n0 + tl.arange(0, BLOCK_D)
        w = tl.load(wd_ptr + j[:, None] * SD_J + n[None, :] * SD_N, eviction_policy=EVICT)
        tl.atomic_add(out_ptr + n, tl.sum(w.to(tl.float32) * h[:, None], 0), sem="relaxed")


def mlp(out, wgu, x, gain, wd, transposed: bool = False, eps: float = 1e-5, rows: int = 16,
        block_k: int = 1024, block_d: int = 512, num_warps: int = 4, evict: str = "") -> None:
    """out (H,) fp32 += W_d (silu(gate) * up), gate/up = rmsnorm(x) * gain @ wgu^T; wgu (2I, H) bf16,
    x (H,) fp32, gain (H,) bf16, wd (H, I) bf16 or, transposed, (I, H). out must hold the residual."""
    i2, hid = wgu.shape
    inter = i2 // 2
    if interpreting():  # each program costs host time under the interpreter
        rows = max(rows, min(64, inter))
    rows = min(rows, inter)
    assert inter % rows == 0, (inter, rows)
    sd_j, sd_n = (hid, 1) if transposed else (1, inter)
    mlp_kernel[(inter // rows,)](wgu, x, gain, wd, out, eps, H=hid, INTER=inter, BLOCK_N=rows,
                                 BLOCK_K=min(block_k, hid), BLOCK_D=min(block_d, hid), SD_J=sd_j, SD_N=sd_n,
                                 EVICT=evict, num_warps=num_warps)
