"""How the studies time a call: runners/timing.py's protocol (warm-up, L2 flush, CUDA-graph replay where asked,
repetitions until the spread is small), as a run times it, with a shorter cap so a sweep of many
configurations fits its budget; on the CPU (a study's dry run) two host-timed calls, no warm-up.
Each study writes the protocol's name into its file; sweep figures in docs/ from before these studies moved
to runners/studies were timed with triton.testing.do_bench or the study's own CUDA events."""
from __future__ import annotations

from typing import Callable

from runners.timing import Protocol, measure

SWEEP = Protocol(max_time_s=0.5)
DRY = Protocol(warmup_reps=0, min_reps=2, max_reps=2)


def timed(fn: Callable[[], None], device: str, graph: bool | None = None) -> tuple[list[float], dict]:
    """(samples in ms, summary stats with "median" and "protocol") of fn on device: "cuda", or "cpu" for a dry run."""
    return measure(fn, device, SWEEP if device == "cuda" else DRY, graph)
