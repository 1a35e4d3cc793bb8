"""The one verdict rule set: statuses, metric kinds, thresholds, tests and `judge(baseline, candidate)`.

The gate (ci/gate*.py), the nightly report and every dashboard page decide "regressed" here and
nowhere else. `rules` holds the vocabulary and the numbers, `stats` the tests, `counts` the k-of-n
view of quality metrics, `judge` the decision.
"""
from db.verdict.ab import interleaved
from db.verdict.counts import counts_of, pool_grids
from db.verdict.judge import Verdict, clock_drop, error_bound, expected_failure, judge
from db.verdict.rules import (COMPARED, EXPECTED, FAILING, FRACTION, KINDS, SEVERITY, STATUSES, Thresholds,
                              host_timer, metric_kind)


def prepare(rows: list[dict]) -> list[dict]:
    """A run's rows as the verdict compares them: needle grids pooled per cell group (k of n summed)."""
    return pool_grids(rows, lambda r: metric_kind(r["metric"], r.get("unit", "")) == FRACTION)


__all__ = ["COMPARED", "EXPECTED", "FAILING", "KINDS", "SEVERITY", "STATUSES", "Thresholds", "Verdict",
           "clock_drop", "counts_of", "error_bound", "expected_failure", "host_timer", "interleaved", "judge", "metric_kind",
           "prepare"]
