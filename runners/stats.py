"""Summary statistics over raw timing samples (plain Python, no numpy needed)."""
from __future__ import annotations

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
