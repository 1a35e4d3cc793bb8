"""The verdict's vocabulary and every threshold: statuses, metric kinds, and the numbers that decide."""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

# Verdict statuses, worst first (reports sort by this). A result row's own status is one of
# ok | error | failed_correctness | skipped; these are what a comparison concludes.
REGRESSED, FAILED, ERRORED = "regressed", "failed correctness", "errored"
IMPROVED, STABLE, EXPECTED = "improved", "stable", "expected failure"
INSUFFICIENT, MISSING = "insufficient data", "missing baseline"
STATUSES = (FAILED, ERRORED, REGRESSED, IMPROVED, STABLE, EXPECTED, INSUFFICIENT, MISSING)
SEVERITY = {s: i for i, s in enumerate(STATUSES)}
FAILING = (FAILED, ERRORED)  # failures of the code (an expected failure is a measurement, not one)
COMPARED = (REGRESSED, IMPROVED, STABLE)  # statuses that come from an actual comparison

# Metric kinds.
TIMING, THROUGHPUT, ERROR, FRACTION, COUNT, VALUE = "timing", "throughput", "error", "quality fraction", "count", "value"
KINDS = (TIMING, THROUGHPUT, ERROR, FRACTION, COUNT, VALUE)
TIME_UNITS = {"ms", "us", "ns", "s"}
ERROR_PREFIXES = ("rel_err", "abs_err", "ulp", "max_err", "mean_err")
FRACTION_PREFIXES = ("recall", "retrieval", "accuracy", "hit_rate", "precision", "success", "within_")
HOST_TIMERS = ("cpu-", "pytest-benchmark")


def metric_kind(metric: str, unit: str = "") -> str:
    """One of KINDS, from the metric's name and unit (names carry their unit: latency_ms, tflops, ...)."""
    m, u = metric.lower(), (unit or "").lower()
    if m.startswith(ERROR_PREFIXES) or m.endswith(("_err", "_error")):
        return ERROR
    if m.startswith(FRACTION_PREFIXES) or m.endswith("_frac"):
        return FRACTION
    if u == "count" or m.endswith(("_count", "_hits")):
        return COUNT
    if u in TIME_UNITS or m.endswith(("_ms", "_us", "_ns")):
        return TIMING
    if u.endswith("/s") or m in ("tflops", "gbps") or m.endswith("_per_s"):
        return THROUGHPUT
    return VALUE


def host_timer(protocol: str) -> bool:
    """Timings taken with host timers (CPU perf_counter, pytest-benchmark) rather than device events."""
    return (protocol or "").startswith(HOST_TIMERS)


@dataclass(frozen=True)
class Thresholds:
    """Every number a verdict uses; the gate's flags override the first few."""

    alpha: float = 0.01  # significance level of the two-sided Mann-Whitney U test and of the count test
    min_effect: float = 0.05  # relative change of medians that counts as a timing change
    # Host-timer protocols drift between runs: back-to-back CPU runs of the same code differed by +9%
    # (p < 1e-50) and, under heavier load, +32% on a shared 2-core host; H200 runs of the same kernels
    # 26 minutes apart differed by at most 3.1%. Host timings are shown, and gate only when asked.
    host_min_effect: float = 0.25
    gate_host_timings: bool = False
    min_samples: int = 5
    suspicious_speedup: float = 10.0  # KernelBench: >10x faster is re-checked and flagged
    clock_drop: float = 0.03  # an SM clock falling more than this while a side was measured is flagged
    # Quality fractions (k of n): a change must be significant on the counts (Fisher's exact test) and
    # at least this large in absolute terms (one needle cell in a grid of 33 is 0.03).
    quality_min_effect: float = 0.05
    count_min_effect: float = 0.10  # counts without a denominator: relative change of the rate

    # Run-to-run spread of a series' median that one run's samples cannot show (relative, per run),
    # by protocol. One operand placement per run: up to 2.8% night CV over 19 H200 runs of one commit
    # (cuBLAS fp64 256^3, results/h200/repeats_v3_full; its medians spanned 9.9%). Eight placements
    # pooled (+place8): 1.0% on the same kernel (docs/DESIGN.md). Host timers gate on host_min_effect.
    run_cv_placed: float = 0.010
    run_cv_gpu: float = 0.028
    # A series with no same-code history whose samples scatter within a run over this many times the
    # protocol's run-to-run spread (stdev/mean of either side) does not move by the protocol's spread
    # between runs: over 3,707 same-code pairs of the committed v4 nightlies (six H200, three H100),
    # medians moved > 5% in 1-6% of pairs below 3x and in 18-39% above it. Its regression is unsteady:
    # re-measured, never blocking on its own.
    unsteady_cv: float = 3.0

    # Interleaved A/B (base and head measured in one job, alternating per round): no night-to-night
    # spread, only the spread of a round's median between rounds of the same code, which the A/B
    # measures itself (db.verdict.ab). Calibrated on the A/A file results/h200/history/ab_same_*
    # (docs/verdict.md, "A/B"): ab_cv is its round-to-round spread (RMS over series) and stands in
    # where a side has one round; ab_z is the one-sided 1/1000 normal quantile, so an A/A series
    # regresses falsely at most once in 1000; ab_min_effect is the smallest change worth a failed PR.
    ab_cv: float = 0.015
    ab_cv_floor: float = 0.001
    ab_z: float = 3.09
    ab_min_effect: float = 0.02

    # Each series' own run-to-run spread, learned from earlier runs of the same code (db.verdict.spread):
    # None takes the table shipped with KernelWatch (db/verdict/run_spread.json); an empty SpreadTable
    # judges on the protocol spreads above alone.
    spreads: Any = None

    def run_cv(self, protocol: str) -> float:
        """The run-to-run spread the timing test adds for this protocol."""
        if host_timer(protocol):
            return 0.0
        return self.run_cv_placed if "+place" in (protocol or "") else self.run_cv_gpu

    def spread_table(self):
        """The learned per-series spreads these thresholds judge with (db.verdict.spread.SpreadTable)."""
        from db.verdict.spread import committed  # scipy-backed; rules stays importable without it
        return committed() if self.spreads is None else self.spreads

    def for_protocol(self, protocol: str) -> "Thresholds":
        """The thresholds for a series' timing protocol (the host minimum effect for host timers)."""
        if host_timer(protocol):
            return replace(self, min_effect=max(self.min_effect, self.host_min_effect))
        return self
