"""Summary statistics over raw timing samples (plain Python, no numpy needed)."""
from __future__ import annotations

import math
import statistics


def quantile(sorted_xs: list[float], q: float) -> float:
    """Linear-interpolated quantile of an already sorted list."""
    if not sorted_xs:
        raise ValueError("quantile of no samples")
    pos = q * (len(sorted_xs) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(sorted_xs) - 1)
    return sorted_xs[lo] + (sorted_xs[hi] - sorted_xs[lo]) * (pos - lo)


def summarize(samples: list[float]) -> dict:
    """n, mean, median, stdev, min, max, q1, q3, iqr and rel_spread (stdev/mean)."""
    xs = sorted(samples)
    mean = statistics.fmean(xs)
    sd = statistics.stdev(xs) if len(xs) > 1 else 0.0
    q1, q3 = quantile(xs, 0.25), quantile(xs, 0.75)
    return {
        "n": len(xs), "mean": mean, "median": quantile(xs, 0.5), "stdev": sd,
        "min": xs[0], "max": xs[-1], "q1": q1, "q3": q3, "iqr": q3 - q1,
        "rel_spread": sd / mean if mean > 0 else 0.0,
    }


def rel_spread_below(samples: list[float], target: float) -> bool:
    """summarize(samples)["rel_spread"] < target, for the timing loop's stop rule (asked after each sample):
    decided on an fsum estimate (within a few ulps of the exact stdev/mean) unless that lies within 1e-6
    of target, where the exact rule decides; the stop falls on the same sample, at ~1/10 of the cost."""
    n = len(samples)
    if n < 2:
        return summarize(samples)["rel_spread"] < target
    mean = math.fsum(samples) / n  # statistics.fmean's own formula
    if mean <= 0:
        return 0.0 < target
    est = math.sqrt(math.fsum([(x - mean) * (x - mean) for x in samples]) / (n - 1)) / mean
    if abs(est - target) > 1e-6 * target:
        return est < target
    return summarize(samples)["rel_spread"] < target
