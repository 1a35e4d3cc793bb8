"""The norm kernel's tuning space as data (runners/studies/fused_norms_tune.py times it on a GPU)."""
from __future__ import annotations

from suite.lib.norm_triton import config_for

# (kind, residual, one_reduce)
KINDS = (("rms", False, True), ("rms", True, True), ("layer", False, True), ("layer", False, False))


def grid(block: int) -> list[tuple[int, int]]:
    """(warps, rows) with 4 to 64 elements per thread per tensor, the heuristic's config first."""
    out = [config_for(block)]
    for w in (1, 2, 4, 8, 16):
        for r in (1, 2, 4, 8):
            if 4 <= r * block // (32 * w) <= 64 and (w, r) not in out:
                out.append((w, r))
    return out
