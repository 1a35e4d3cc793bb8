"""Dependency counters between the work items of one launch (suite/lib/decode_dataflow.py).

An item claims its ticket in launch order, so it only ever waits on items claimed before it, which are
resident or done: no deadlock, whatever the grid size. sync (int32): [0] the ticket counter, [1] a flag
set when a wait gave up, [2 + i] the number of finished items of stage i. Under the interpreter
programs run one after another in order, so every wait is already met when it is reached."""
from __future__ import annotations

import triton
import triton.language as tl

GIVE_UP = 1 << 20  # polls before a wait gives up (a stuck step gives a wrong result, never a hang)


@triton.jit
def claim(sync_ptr):
    """This program's ticket: 0, 1, 2, ... in the order programs start."""
    return tl.atomic_add(sync_ptr, 1, sem="relaxed", scope="gpu")


@triton.jit
def wait_done(sync_ptr, stage, target):
    """Wait until sync[2 + stage] >= target (acquire: the stage's stores are then visible). After
    GIVE_UP polls it sets sync[1] and goes on; once set, later waits do not poll."""
    seen = tl.atomic_add(sync_ptr + 2 + stage, 0, sem="acquire", scope="gpu")
    if seen < target:
        spins = tl.atomic_add(sync_ptr + 1, 0, sem="relaxed", scope="gpu") * 1048576
        while (seen < target) & (spins < 1048576):
            seen = tl.atomic_add(sync_ptr + 2 + stage, 0, sem="acquire", scope="gpu")
            spins += 1
        if seen < target:
            tl.atomic_xchg(sync_ptr + 1, 1)
    tl.debug_barrier()  # no warp reads the stage's output before the acquire above


@triton.jit
def signal_done(sync_ptr, stage):
    """Count this item finished in stage `stage` (release: every warp's stores before it); the old count."""
    tl.debug_barrier()
    return tl.atomic_add(sync_ptr + 2 + stage, 1, sem="release", scope="gpu")
