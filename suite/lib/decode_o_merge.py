"""The decode step's O projection with attention's merge in its prologue: attention (decode_attention,
defer=...) only stores its split partials and copies the residual into the output; this launch has a
program per (KV head, block of output rows), which loads its W_O block (the head's G*D columns) before
it waits, then merges that head's partials itself (every row block of a head merges the same partials:
no counter, no last-split chain) and adds W_O[rows, head's columns] @ att_head into the output with
atomics. The order of the KV heads' adds is the hardware's, so the output's last bits may differ between
runs (the per-launch O is bit-reproducible)."""
from __future__ import annotations

import triton
import triton.language as tl

from suite.lib.decode_attention import merge_partials
from suite.lib.decode_gemv import _launch_next, _wait, launch_opts
from suite.lib.interp import interpreting


@triton.jit
def o_merge_kernel(w_ptr, part_o, part_ml, out_ptr, K: tl.constexpr, G: tl.constexpr, D: tl.constexpr,
                   NSPLIT: tl.constexpr, BLOCK_N: tl.constexpr, PDL: tl.constexpr, TRIG: tl.constexpr):
    """Program (hk, blk): out[blk*BLOCK_N..] += W[rows, hk*G*D..(hk+1)*G*D] @ merge(partials of KV head hk).
    w (N, K) bf16 row-major, K = Hq*D; part_o (Hkv*NSPLIT*G, D) fp32 or bf16; part_ml (Hkv*NSPLIT*G, 2) fp32."""
    hk = tl.program_id(0)
    blk = tl.program_id(1)
    if TRIG:
        tl.extra.cuda.gdc_launch_dependents()
    rows = blk * BLOCK_N + tl.arange(0, BLOCK_N)
    gg = tl.arange(0, G)
    d = tl.arange(0, D)
    # W's rows of query heads hk*G.. (G*D contiguous columns); nothing earlier in the step writes W
    w = tl.load(w_ptr + rows[:, None] * K + hk * G * D + tl.arange(0, G * D)[None, :])  # (BLOCK_N, G*D)
    _wait(PDL)
    if not TRIG:
        _launch_next(PDL)
    pr = (hk * NSPLIT + tl.arange(0, NSPLIT))[:, None] * G + gg[None, :]  # (NSPLIT, G) partial rows
    att = tl.reshape(merge_partials(part_o, part_ml, pr, d, D), [G * D])
    y = tl.sum(w.to(tl.float32) * att[None, :], 1)  # (BLOCK_N,)
    tl.atomic_add(out_ptr + rows, y, sem="relaxed")


def rows_per_program(n: int, per_head: int) -> int:
    """The power of two of rows per program leaving about per_head row blocks of n (a power of two) per KV head."""
    bn = triton.next_power_of_2(triton.cdiv(n, max(1, per_head)))
    return min(bn, n)


def o_merge(out, w, attn, pdl: bool = False, trig: bool = False, target_programs: int | None = None,
            num_warps: int = 8) -> None:
    """out (N,) fp32 += W (N, Hq*D) bf16 @ the attention output merged from attn's partials (a DecodeAttention
    called with defer=(res, out), which stored them and put res in out). target_programs: about this many
    programs in all, Hkv of them per row block (None: 128; one row block per head under the interpreter)."""
    n, k = w.shape
    if target_programs is None:
        target_programs = attn.hkv if interpreting() else 128
    bn = rows_per_program(n, target_programs // attn.hkv)
    assert n % bn == 0 and k == attn.hkv * attn.g * attn.d, (n, k, bn)
    o_merge_kernel[(attn.hkv, n // bn)](w, attn.part_o, attn.part_ml, out, K=k, G=attn.g, D=attn.d,
                                        NSPLIT=attn.nsplit, BLOCK_N=bn, PDL=pdl and not interpreting(),
                                        TRIG=trig and not interpreting(), num_warps=num_warps, **launch_opts(pdl))
