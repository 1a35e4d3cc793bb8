"""The decode kernel's tuning space as data (runners/studies/w4a16_decode_tune.py times it on a GPU)."""
from __future__ import annotations

from suite.techniques.w4a16_gemm import triton_w4a16_decode as D

# (layout, BM, BN, SPLIT_K, warps, stages, ASM, CENTRED, PREFETCH): see triton_w4a16_decode; layout
# "k16" (packing.pack_k16) or "k8" (int4.pack_k).
BEST = [(64, 4), (64, 8), (64, 16), (128, 4), (128, 8), (128, 16), (256, 4), (256, 8)]  # (BN, SPLIT_K)
SWEEP = ([("k16", 16, bn, sp, 4, 3, True, True, pf) for bn, sp in BEST for pf in (False, True)]
         + [("k16", 16, bn, sp, 4, 4, True, True, True) for bn, sp in BEST]
         + [("k16", 16, bn, sp, 2, 4, True, True, True) for bn, sp in
            ((32, 1), (32, 2), (32, 4), (64, 2), (64, 4), (64, 8), (128, 4), (128, 8))]
         + [("k16", 16, bn, 8, 4, 3, True, False, True) for bn in (64, 128, 256)]  # row sums, not centred
         + [("k8", 16, 128, sp, 4, 3, True, True, True) for sp in (4, 8)]
         + [("k16", 16, 128, sp, 4, 3, False, False, False) for sp in (4, 8)])  # shifts, no inline PTX
# Deeper pipelines with little or no split-K: the read-only floor's best config was BLOCK_N 128, no split, 6
# stages (docs/formats.md), a region SWEEP does not reach.
DEEP = [("k16", 16, bn, sp, 4, st, True, True, pf) for bn in (64, 128) for sp in (1, 2) for st in (4, 5, 6)
        for pf in (False, True)] + [("k16", 16, 128, 4, 4, 3, True, True, True)]
NIGHTLY = [("k16", c.kwargs["BM"], c.kwargs["BN"], c.kwargs["SPLIT_K"], c.num_warps, c.num_stages,
            c.kwargs.get("ASM", False), c.kwargs.get("CENTRED", False), c.kwargs.get("PREFETCH", False))
           for c in D.CONFIGS]
