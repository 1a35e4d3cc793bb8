"""Noise-aware comparison of two sample sets: Mann-Whitney U plus a minimum effect, with a bootstrap CI.

The verdict needs both: the shift must be significant (two-sided Mann-Whitney U, scipy) and the
relative change of medians must reach the minimum effect. A bootstrap 95% CI of the median ratio
gives the uncertainty; where the CI straddles the minimum effect the comparison is ambiguous.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

ERROR_PREFIXES = ("rel_err", "abs_err", "ulp", "max_err", "mean_err")
RETRIEVAL_PREFIXES = ("recall", "accuracy", "hit_rate", "precision", "success")


def metric_kind(metric: str, unit: str = "") -> str:
    """'timing', 'error' (lower is better, bounded absolutely) or 'retrieval' (may not fall)."""
    m = metric.lower()
    if m.startswith(ERROR_PREFIXES) or m.endswith("_err") or m.endswith("_error"):
        return "error"
    if m.startswith(RETRIEVAL_PREFIXES):
        return "retrieval"
    return "timing"


@dataclass
class Comparison:
    """Outcome of comparing candidate samples with baseline samples (worse > 0 means worse)."""

    outcome: str  # regressed | improved | stable | ambiguous | insufficient
    change: float  # relative change of medians, candidate vs baseline, (c - b) / b
    worse: float  # change signed so that positive is worse for this metric's direction
    ci_low: float  # 95% bootstrap CI of `change`
    ci_high: float
    p_value: float
    n_baseline: int
    n_candidate: int
    median_baseline: float
    median_candidate: float


@dataclass(frozen=True)
class Thresholds:
    alpha: float = 0.01  # significance level of the two-sided Mann-Whitney U test
    min_effect: float = 0.05  # relative change of medians that counts as a change
    min_samples: int = 5
    bootstrap: int = 2000
    suspicious_speedup: float = 10.0  # KernelBench: >10x faster is re-checked and flagged
    # Host-timer protocols (CPU perf_counter, pytest-benchmark) drift more between runs: back-to-back
    # CPU runs of the same code differed by +9% (p < 1e-50) and, under heavier load, +32% on a shared
    # 2-core host here. H200 runs of the same kernels 26 minutes apart differed by at most 3.1%.
    host_min_effect: float = 0.25

    def for_protocol(self, protocol: str) -> "Thresholds":
        """The thresholds for a series' timing protocol (the host minimum effect for host timers)."""
        from dataclasses import replace

        host = protocol.startswith(("cpu-", "pytest-benchmark"))
        return replace(self, min_effect=max(self.min_effect, self.host_min_effect)) if host else self


def bootstrap_ratio_ci(base: np.ndarray, cand: np.ndarray, n: int, seed: int = 0,
                       level: float = 0.95) -> tuple[float, float]:
    """Percentile bootstrap CI of median(cand) / median(base), resampling each side independently."""
    rng = np.random.default_rng(seed)
    bi = rng.integers(0, len(base), size=(n, len(base)))
    ci = rng.integers(0, len(cand), size=(n, len(cand)))
    ratios = np.median(cand[ci], axis=1) / np.median(base[bi], axis=1)
    lo, hi = np.quantile(ratios, [(1 - level) / 2, 1 - (1 - level) / 2])
    return float(lo), float(hi)


def compare_samples(base: list[float], cand: list[float], direction: str, th: Thresholds) -> Comparison:
    """Compare two sets of raw samples of one series; direction 'lower' or 'higher' is better."""
    from scipy.stats import mannwhitneyu

    b = np.asarray([x for x in base if x is not None and math.isfinite(x)], dtype=float)
    c = np.asarray([x for x in cand if x is not None and math.isfinite(x)], dtype=float)
    sign = 1.0 if direction == "lower" else -1.0
    if len(b) < th.min_samples or len(c) < th.min_samples or np.median(b) <= 0:
        mb = float(np.median(b)) if len(b) else float("nan")
        mc = float(np.median(c)) if len(c) else float("nan")
        ch = (mc - mb) / mb if len(b) and len(c) and mb > 0 else float("nan")
        return Comparison("insufficient", ch, sign * ch, float("nan"), float("nan"), float("nan"),
                          len(b), len(c), mb, mc)
    mb, mc = float(np.median(b)), float(np.median(c))
    change = (mc - mb) / mb
    lo, hi = bootstrap_ratio_ci(b, c, th.bootstrap)
    lo, hi = lo - 1.0, hi - 1.0
    p = float(mannwhitneyu(c, b, alternative="two-sided").pvalue)
    worse = sign * change
    w_lo, w_hi = sorted((sign * lo, sign * hi))
    significant = p < th.alpha
    if significant and worse >= th.min_effect and w_lo > 0:
        outcome = "regressed"
    elif significant and worse <= -th.min_effect and w_hi < 0:
        outcome = "improved"
    elif -th.min_effect < w_lo and w_hi < th.min_effect:
        outcome = "stable"  # the whole CI lies inside the band of no meaningful change
    elif not significant and abs(worse) < th.min_effect / 2:
        outcome = "stable"  # no evidence of a shift and a small point estimate
    else:
        outcome = "ambiguous"
    return Comparison(outcome, change, worse, lo, hi, p, len(b), len(c), mb, mc)
