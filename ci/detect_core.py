"""Baselines the shipped detector (db.detector) is benchmarked against: PELT, the detector shipped
before it, run online over the last 20 nights; Conbench's z-score; a fixed 5% threshold.

PELT (Killick, Fearnhead & Eckley 2012, "Optimal detection of changepoints with a linear
computational cost", JASA) as implemented by the `ruptures` package, on log values (so steps are
relative), L2 cost (a single outlier night cannot form a segment),
penalty = beta * sigma^2 * log(n) with sigma a robust (MAD of first differences) noise scale,
minimum segment of 3 nights.
A change point is reported only when the medians either side differ by at least `min_rel`, and when
the new level is not one the series already visited (`recurring_min` of the `history` nights before the
change within `recurring_tol` of it): kernels that settle in one of two levels run to run show a few
high nights in a row as that known state, not as a change. How the settings were chosen:
docs/detector_benchmark.md, "The PELT baseline's settings".
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from db.detector import MIN_REL


@dataclass(frozen=True)
class PeltSettings:
    beta: float = 4.0  # penalty multiplier on sigma^2 log(n)
    min_size: int = 3  # nights per segment, at least: a change is confirmed by 3 nights (delay <= 2)
    min_rel: float = MIN_REL  # smallest relative change reported (the shipped detector's floor too)
    sigma_floor: float = 0.002  # relative noise never assumed below 0.2%
    window: int = 20  # nights looked at when run online
    recurring_tol: float = 0.01  # a new level within 1% of...
    recurring_min: int = 2  # ...at least this many of...
    history: int = 40  # ...the nights before the change is a level already visited: not reported

    @property
    def min_nights(self) -> int:
        """Nights a series needs before a change can be placed in it (a segment each side)."""
        return 2 * self.min_size


@dataclass
class Change:
    index: int  # first night of the new segment
    before: float  # median of the segment before
    after: float  # median of the segment after
    rel_change: float  # after / before - 1


def robust_sigma(logs: np.ndarray) -> float:
    """Noise scale of a log series from the MAD of its first differences (insensitive to steps)."""
    if len(logs) < 3:
        return 0.0
    d = np.diff(logs)
    return float(1.4826 * np.median(np.abs(d - np.median(d))) / math.sqrt(2))


def pelt_changes(values: list[float], s: PeltSettings = PeltSettings(),
                 earlier: list[float] | None = None) -> list[Change]:
    """Change points of a positive-valued series (oldest first) by PELT on log values; `earlier`:
    nights before `values` (not segmented), looked at only to tell a recurring level from a change."""
    import ruptures  # imports scipy (heavy): only the benchmark's baseline needs it, not kwatch

    x = np.asarray([v for v in values], dtype=float)
    if len(x) < s.min_nights or np.any(~np.isfinite(x)) or np.any(x <= 0):
        return []
    logs = np.log(x)
    sigma = max(robust_sigma(logs), s.sigma_floor)
    pen = s.beta * sigma**2 * math.log(len(x))
    bkps = ruptures.Pelt(model="l2", min_size=s.min_size, jump=1).fit(logs.reshape(-1, 1)).predict(pen=pen)
    edges = [0] + bkps  # predict() ends with len(x)
    past = np.concatenate([np.asarray(earlier or [], dtype=float), x])
    shift = len(past) - len(x)  # index of x[0] in past
    out = []
    for i in range(1, len(edges) - 1):
        lo, mid, hi = edges[i - 1], edges[i], edges[i + 1]
        before, after = float(np.median(x[lo:mid])), float(np.median(x[mid:hi]))
        rel = after / before - 1.0
        if abs(rel) < s.min_rel:
            continue
        seen = past[max(0, shift + mid - s.history):shift + mid]
        if np.count_nonzero(np.abs(seen / after - 1.0) < s.recurring_tol) >= s.recurring_min:
            continue
        out.append(Change(mid, before, after, rel))
    return out


def zscore_alert(history: list[float], value: float, lookback: int = 20, z: float = 5.0) -> bool:
    """Conbench's rule: |value - mean(last lookback)| / stdev(last lookback) > z."""
    h = np.asarray(history[-lookback:], dtype=float)
    if len(h) < 3:
        return False
    sd = float(np.std(h, ddof=1))
    if sd == 0:
        return value != float(np.mean(h))
    return abs(value - float(np.mean(h))) / sd > z


def threshold_alert(history: list[float], value: float, lookback: int = 5, rel: float = 0.05) -> bool:
    """A fixed threshold: |value / median(last lookback) - 1| > rel."""
    h = history[-lookback:]
    if not h:
        return False
    return abs(value / float(np.median(h)) - 1.0) > rel


def online_pelt(values: list[float], s: PeltSettings = PeltSettings(), recent: int = 3,
                start: int = 0) -> list[tuple[int, Change]]:
    """Replay nightly: after each night n, run PELT on the last `window` nights and alert on a change
    starting within the last `recent` nights not alerted before (+-1 night). Returns (night, change)."""
    alerts: list[tuple[int, Change]] = []
    seen: list[int] = []
    for n in range(start, len(values)):
        lo = max(0, n + 1 - s.window)
        for c in pelt_changes(values[lo:n + 1], s, earlier=values[max(0, lo - s.history):lo]):
            at = lo + c.index
            if at < n + 1 - recent or any(abs(at - k) <= 1 for k in seen):
                continue
            seen.append(at)
            alerts.append((n, Change(at, c.before, c.after, c.rel_change)))
    return alerts
