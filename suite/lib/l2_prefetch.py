"""L2 prefetch from inside a kernel: a latency-bound launch (a small GEMV, decode attention) leaves
the DRAM mostly idle, so it can ask the L2 for weights a later launch will stream; that launch then
reads them from the L2. The request (`prefetch.global.L2`, sm_80+) is a hint: it takes no registers,
the program does not wait for it, and it never changes a result. Off under the interpreter (no PTX)."""
from __future__ import annotations

import triton
import triton.language as tl

from suite.lib.interp import interpreting

LINE = 128  # bytes an L2 request covers
PF_OFF, PF_EVICT_LAST, PF_NORMAL = 0, 1, 2


@triton.jit
def prefetch_l2(pf_ptr, pf_lines, pid, nprog, PF: tl.constexpr):
    """Program pid of nprog requests its contiguous share of pf_lines 128-byte lines from pf_ptr
    (a bf16 pointer, so a line is 64 elements). PF: 0 off, 1 evict-last priority, 2 normal."""
    if PF != 0:
        per = tl.cdiv(pf_lines, nprog)
        lo = pid * per
        hi = tl.minimum(lo + per, pf_lines)
        for l0 in range(lo, hi, 128):
            lines = tl.minimum(l0 + tl.arange(0, 128), hi - 1)  # a repeated line costs nothing
            addr = pf_ptr + lines.to(tl.int64) * 64
            if PF == 1:
                tl.inline_asm_elementwise("prefetch.global.L2::evict_last [$1]; mov.u32 $0, 0;", "=r,l",
                                          [addr], dtype=tl.int32, is_pure=False, pack=1)
            else:
                tl.inline_asm_elementwise("prefetch.global.L2 [$1]; mov.u32 $0, 0;", "=r,l",
                                          [addr], dtype=tl.int32, is_pure=False, pack=1)


def prefetch_args(pf, policy: int = PF_EVICT_LAST) -> tuple:
    """(pointer, lines, PF) for a kernel's prefetch_l2 from pf, a contiguous bf16 tensor or None
    (then, or under the interpreter, PF is 0 and the pointer a placeholder)."""
    if pf is None or pf.numel() == 0 or interpreting() or policy == PF_OFF:
        return (pf, 0, PF_OFF)
    assert pf.is_contiguous() and pf.element_size() == 2
    return (pf, triton.cdiv(pf.numel() * 2, LINE), policy)
