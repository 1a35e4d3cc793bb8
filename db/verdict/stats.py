"""The verdict's tests: Mann-Whitney U with a CI of the median ratio on raw samples, and tests on counts.

Samples: the shift must be significant (two-sided Mann-Whitney U) and the relative change of
medians must reach the minimum effect; a distribution-free 95% CI of the median ratio gives the
uncertainty, and where the CI straddles the minimum effect the comparison is ambiguous.
Counts (k successes of n trials): Fisher's exact test on the 2x2 table (two-proportion z-test once
both sides have more than FISHER_MAX trials, where the two agree and Fisher's is slow), plus a
minimum absolute change of the fraction.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

import numpy as np

FISHER_MAX = 100_000
Z95 = 1.959964


@dataclass
class Comparison:
    """Outcome of comparing candidate with baseline (worse > 0 means worse for the metric's direction)."""

    outcome: str  # regressed | improved | stable | ambiguous | insufficient
    change: float  # relative change, candidate vs baseline, (c - b) / b
    worse: float  # worse_of the ratio: positive is worse, on the scale of time for rates too
    ci_low: float  # 95% CI of `change` (nan where none)
    ci_high: float
    p_value: float
    n_baseline: int
    n_candidate: int
    median_baseline: float
    median_candidate: float


def _log_median_se(x: np.ndarray) -> float:
    """Distribution-free standard error of log(median(x)): the order statistics that bound the median's
    95% interval (McKean & Schrader, 1984), taken on the log scale (x sorted, positive)."""
    n = len(x)
    c = max(1, int(round((n + 1) / 2 - Z95 * math.sqrt(n) / 2)))
    return (math.log(x[n - c]) - math.log(x[c - 1])) / (2 * Z95)


def median_ratio_ci(base: np.ndarray, cand: np.ndarray, run_cv: float = 0.0) -> tuple[float, float]:
    """95% CI of median(cand) / median(base): log ratio +- 1.96 x the combined distribution-free
    standard errors (the ratio-of-medians interval of Price & Bonett, 2002), each side's run-to-run
    spread `run_cv` (relative) added, which samples of one run cannot show. Deterministic and
    O(n log n), so a page over every series gives the gate's figures."""
    return _ratio_ci_sorted(np.sort(base), np.sort(cand), run_cv)


def _ratio_ci_sorted(b: np.ndarray, c: np.ndarray, run_cv: float = 0.0,
                     series: Optional[tuple] = None) -> tuple[float, float]:
    """median_ratio_ci of samples already sorted; series = (spread, quantile[, narrower]): the series' own
    learned run-to-run spread (db.verdict.spread) at its own quantile; the interval is the wider of the
    two, or the series' own alone where `narrower` (enough history says it moves less than run_cv)."""
    if b[0] <= 0 or c[0] <= 0:
        return math.nan, math.nan
    mid = math.log(float(np.median(c)) / float(np.median(b)))
    own = _log_median_se(b) ** 2 + _log_median_se(c) ** 2
    half = Z95 * math.sqrt(own + 2 * run_cv ** 2)
    if series is not None:
        mine = series[1] * math.sqrt(own + 2 * series[0] ** 2)
        half = mine if len(series) > 2 and series[2] else max(half, mine)
    return math.exp(mid - half), math.exp(mid + half)


def mann_whitney_p(b: np.ndarray, c: np.ndarray) -> float:
    """Two-sided Mann-Whitney U p-value, normal approximation with tie and continuity corrections
    (scipy's method="asymptotic", vectorised: a page judges every series of a run with it)."""
    return _mann_whitney_sorted(np.sort(b), np.sort(c))


def _mann_whitney_sorted(bs: np.ndarray, cs: np.ndarray) -> float:
    """mann_whitney_p of samples already sorted (merged in linear time: a stable sort of two sorted runs)."""
    n1, n2 = len(bs), len(cs)
    # U of the candidate: pairs with b < c, plus half of the ties.
    u = (np.searchsorted(bs, cs, "left").sum() + np.searchsorted(bs, cs, "right").sum()) / 2.0
    s = np.sort(np.concatenate([bs, cs]), kind="stable")
    edges = np.concatenate(([True], s[1:] != s[:-1], [True]))
    ties = np.diff(np.flatnonzero(edges))  # sizes of runs of equal values
    n = n1 + n2
    var = n1 * n2 / 12.0 * ((n + 1) - float((ties ** 3 - ties).sum()) / (n * (n - 1)))
    if var <= 0:
        return 1.0
    z = max(abs(u - n1 * n2 / 2.0) - 0.5, 0.0) / math.sqrt(var)
    return math.erfc(z / math.sqrt(2.0))


def n_samples(xs) -> int:
    """How many samples a row holds: a list, a numpy array (db.samples) or None."""
    return 0 if xs is None else len(xs)


def finite(xs) -> np.ndarray:
    """The finite floats of a list or array (None and NaN dropped), as a float64 array (an array of
    float64 read as it is, not copied into Python floats)."""
    # None becomes NaN, dropped with the other non-finite values
    a = np.asarray(xs if xs is not None else [], dtype=float)
    return a[np.isfinite(a)]


def worse_of(ratio: float, direction: str) -> float:
    """How much worse a candidate/baseline ratio of medians is, on the scale of time: a timing's own
    change (ratio - 1); for a rate (higher is better) the change of the time one unit of work takes
    (1 / ratio - 1). One call judged by its latency and by its throughput so gets one verdict: latency
    +5.1% is tflops -4.85%, both 5.1% worse."""
    if not ratio == ratio:  # nan
        return math.nan
    if direction == "lower":
        return ratio - 1.0
    return 1.0 / ratio - 1.0 if ratio > 0 else math.inf


def compare_samples(base, cand, direction: str, alpha: float, min_effect: float, min_samples: int,
                    run_cv: float = 0.0, series: Optional[tuple] = None) -> Comparison:
    """Compare two sets of raw samples of one series; direction 'lower' or 'higher' is better.
    A regression (improvement) needs significance, the minimum effect, and a CI that, widened by the
    protocol's run-to-run spread `run_cv`, lies wholly on the worse (better) side; stable needs the
    samples' own CI inside the band of no meaningful change, or no significance and a small change."""
    b, c = np.sort(finite(base)), np.sort(finite(cand))  # sorted once for the medians, the CI and the test
    mb = float(np.median(b)) if len(b) else math.nan
    mc = float(np.median(c)) if len(c) else math.nan
    if len(b) < min_samples or len(c) < min_samples or not mb > 0:
        ch = (mc - mb) / mb if len(b) and len(c) and mb > 0 else math.nan
        return Comparison("insufficient", ch, worse_of(mc / mb if mb > 0 else math.nan, direction), math.nan,
                          math.nan, math.nan, len(b), len(c), mb, mc)
    change = (mc - mb) / mb
    ratio_lo, ratio_hi = _ratio_ci_sorted(b, c, run_cv, series)
    lo, hi = ratio_lo - 1.0, ratio_hi - 1.0
    p = _mann_whitney_sorted(b, c)
    worse = worse_of(mc / mb, direction)
    w_lo, w_hi = sorted((worse_of(ratio_lo, direction), worse_of(ratio_hi, direction)))
    own_lo, own_hi = sorted(worse_of(r, direction) for r in _ratio_ci_sorted(b, c))
    significant = p < alpha
    effect = min_effect * (1 - 1e-9)  # a change of exactly the minimum effect (1.05 / 1 - 1 = 0.0499999...) reaches it
    if significant and worse >= effect and w_lo > 0:
        outcome = "regressed"
    elif significant and worse <= -effect and w_hi < 0:
        outcome = "improved"
    elif -min_effect < own_lo and own_hi < min_effect:
        outcome = "stable"  # the samples' CI lies inside the band of no meaningful change
    elif not significant and abs(worse) < min_effect / 2:
        outcome = "stable"  # no evidence of a shift and a small point estimate
    else:
        outcome = "ambiguous"
    return Comparison(outcome, change, worse, lo, hi, p, len(b), len(c), mb, mc)


def proportion_p(k1: int, n1: int, k2: int, n2: int) -> float:
    """Two-sided p-value that k1/n1 and k2/n2 are the same proportion (Fisher's exact test, or the
    pooled two-proportion z-test when both n exceed FISHER_MAX)."""
    if min(n1, n2) > FISHER_MAX:
        p = (k1 + k2) / (n1 + n2)
        se = math.sqrt(p * (1 - p) * (1 / n1 + 1 / n2))
        if se == 0:
            return 1.0
        return math.erfc(abs(k1 / n1 - k2 / n2) / se / math.sqrt(2.0))
    from scipy.stats import fisher_exact  # scipy.stats takes 0.6 s to import: only where a test runs

    return float(fisher_exact([[k1, n1 - k1], [k2, n2 - k2]]).pvalue)


def compare_counts(kb: int, nb: int, kc: int, nc: int, direction: str, alpha: float,
                   min_effect: float) -> Comparison:
    """Compare fractions kb/nb and kc/nc: significant on the counts and at least min_effect apart
    (absolute). direction 'higher' (recall) or 'lower' (a miss rate) is better."""
    fb, fc = kb / nb, kc / nc
    sign = 1.0 if direction == "lower" else -1.0
    worse = sign * (fc - fb)  # absolute change of the fraction, positive = worse
    change = (fc - fb) / fb if fb else math.nan
    p = proportion_p(kb, nb, kc, nc)
    if p < alpha and worse >= min_effect:
        outcome = "regressed"
    elif p < alpha and worse <= -min_effect:
        outcome = "improved"
    else:
        outcome = "stable"
    return Comparison(outcome, change, worse, math.nan, math.nan, p, nb, nc, fb, fc)


def compare_rates(kb: int, kc: int, direction: str, alpha: float, min_effect: float) -> Comparison:
    """Compare two Poisson counts of equal exposure: exact conditional binomial test (kc of kb + kc
    at 1/2) and a minimum relative change."""
    sign = 1.0 if direction == "lower" else -1.0
    change = (kc - kb) / kb if kb else (math.inf if kc else 0.0)
    from scipy.stats import binomtest

    p = float(binomtest(kc, kb + kc, 0.5).pvalue) if kb + kc else 1.0
    worse = sign * change
    outcome = ("regressed" if p < alpha and worse >= min_effect else
               "improved" if p < alpha and worse <= -min_effect else "stable")
    return Comparison(outcome, change, worse, math.nan, math.nan, p, 1, 1, float(kb), float(kc))
