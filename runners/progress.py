"""Run progress on stderr: a bar with an ETA on a terminal, a plain line every few seconds otherwise."""
from __future__ import annotations

import sys
import time
from contextlib import contextmanager
from typing import Callable, Iterator

PLAIN_EVERY_S = 5.0


def eta_s(done: int, total: int, elapsed: float) -> float | None:
    """Seconds left, from the mean time per finished job; None before the first one."""
    return elapsed / done * (total - done) if done else None


def _clock(s: float | None) -> str:
    return "?" if s is None else f"{int(s) // 60}:{int(s) % 60:02d}"


def plain_line(done: int, total: int, elapsed: float, label: str) -> str:
    """e.g. '[ 12/56]  21%  0:14 elapsed, about 0:52 left  exp_approx/triton_mufu/elem_n4k'."""
    pct = 100 * done // total if total else 100
    return (f"[{done:>{len(str(total))}}/{total}] {pct:>3}%  {_clock(elapsed)} elapsed, "
            f"about {_clock(eta_s(done, total, elapsed))} left  {label}")


@contextmanager
def reporter(stream=None, every_s: float = PLAIN_EVERY_S) -> Iterator[Callable[[int, int, str], None]]:
    """Yields progress(done, total, label) for runners.run.execute."""
    stream = stream or sys.stderr
    t0 = time.monotonic()
    if stream.isatty():
        from rich.console import Console
        from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn,
                                   TimeRemainingColumn)

        with Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                      TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
                      console=Console(file=stream), transient=True) as bar:
            task = bar.add_task("planning", total=None)
            yield lambda done, total, label: bar.update(task, completed=done, total=total, description=label)
        return
    last = [-every_s]

    def progress(done: int, total: int, label: str) -> None:
        now = time.monotonic() - t0
        if now - last[0] >= every_s or done == total:
            last[0] = now
            print(plain_line(done, total, now, label), file=stream, flush=True)

    yield progress
