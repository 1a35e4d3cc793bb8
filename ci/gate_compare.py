"""Per-series gate verdicts: timing by a noise-aware test, accuracy and recall by absolute bounds."""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Optional

from ci.gate_refs import RunData
from ci.gate_stats import Comparison, Thresholds, compare_samples, metric_kind
from db.series import SeriesKey, key_of_row
from suite.registry import known_failure

STATUSES = ("regressed", "failed correctness", "errored", "improved", "stable", "insufficient data",
            "missing baseline")
# Worst first in reports.
SEVERITY = {s: i for i, s in enumerate(STATUSES)}


@dataclass
class SeriesVerdict:
    """The gate's decision on one series, with its figures and the reasons."""

    key: SeriesKey
    status: str
    kind: str  # timing | error | retrieval
    unit: str
    direction: str
    params: dict
    baseline_value: Optional[float] = None
    candidate_value: Optional[float] = None
    change: Optional[float] = None  # (candidate - baseline) / baseline
    ci: Optional[tuple[float, float]] = None  # 95% CI of change
    p_value: Optional[float] = None
    n_baseline: int = 0
    n_candidate: int = 0
    bound: Optional[float] = None  # absolute bound for error/retrieval metrics
    reason: str = ""
    new_failure: bool = False
    muted: Optional[dict] = None
    remeasured: bool = False
    flags: list[str] = field(default_factory=list)
    ambiguous: bool = False

    @property
    def blocking(self) -> bool:
        """Does this series fail the gate (a regression or a new failure, not muted)?"""
        if self.muted:
            return False
        return self.status == "regressed" or self.new_failure

    def as_dict(self) -> dict:
        d = asdict(self)
        d["key"] = self.key.as_dict()
        d["blocking"] = self.blocking
        return d


def _finite(x) -> Optional[float]:
    return x if isinstance(x, (int, float)) and math.isfinite(x) else None


def _apply_comparison(v: SeriesVerdict, c: Comparison) -> None:
    v.baseline_value, v.candidate_value = _finite(c.median_baseline), _finite(c.median_candidate)
    v.change = _finite(c.change)
    v.ci = (c.ci_low, c.ci_high) if _finite(c.ci_low) is not None else None
    v.p_value = _finite(c.p_value)
    v.n_baseline, v.n_candidate = c.n_baseline, c.n_candidate


def judge_timing(v: SeriesVerdict, base: dict, cand: dict, th: Thresholds) -> Comparison:
    """Mann-Whitney U + minimum effect on the raw samples (medians compared)."""
    th = th.for_protocol(v.key.protocol)
    c = compare_samples(base.get("samples") or [], cand.get("samples") or [], v.direction, th)
    _apply_comparison(v, c)
    v.ambiguous = c.outcome == "ambiguous"
    if c.outcome == "insufficient":
        v.status = "insufficient data"
        v.reason = f"too few samples (baseline {c.n_baseline}, candidate {c.n_candidate}; need {th.min_samples})"
    elif c.outcome == "ambiguous":
        v.status = "insufficient data"
        v.reason = (f"ambiguous: change {c.change:+.1%} (95% CI {c.ci_low:+.1%}..{c.ci_high:+.1%}, "
                    f"p={c.p_value:.2g}) neither clears nor fails the {th.min_effect:.0%} effect at "
                    f"alpha={th.alpha}; re-measure (--remeasure beside a runner)")
    else:
        v.status = c.outcome
        v.reason = (f"Mann-Whitney U p={c.p_value:.2g}, median change {c.change:+.2%} "
                    f"(needs p<{th.alpha} and >= {th.min_effect:.0%})")
    speedup = None
    if c.median_candidate and c.median_baseline and c.median_candidate > 0:
        speedup = (c.median_baseline / c.median_candidate if v.direction == "lower"
                   else c.median_candidate / c.median_baseline)
    if speedup is not None and speedup > th.suspicious_speedup:
        v.flags.append(f"suspicious speedup {speedup:.1f}x (> {th.suspicious_speedup:.0f}x): "
                       "correctness must be re-checked on fresh inputs")
    for side, row in (("baseline", base), ("candidate", cand)):
        drop = clock_drop(row)
        if drop:
            v.flags.append(f"SM clock fell during the {side}'s measurement ({drop[0]:.0f} -> {drop[1]:.0f} MHz): "
                           "the GPU throttled, so part of a difference may be the clock, not the code")
    return c


def clock_drop(row: dict, tolerance: float = 0.03) -> Optional[tuple[float, float]]:
    """(clock before, clock after) in MHz when the SM clock fell by more than `tolerance` while the
    row was measured (power or thermal throttling), else None. Rows without clocks (CPU) give None."""
    st = row.get("stats") or {}
    before, after = _finite(st.get("sm_clock_before_mhz")), _finite(st.get("sm_clock_after_mhz"))
    if before and after and after < before * (1 - tolerance):
        return before, after
    return None


def judge_error(v: SeriesVerdict, base: dict, cand: dict, slack: float) -> None:
    """Error may not exceed the stored tolerance (else baseline x (1 + slack))."""
    b, c = _finite(base.get("value")), _finite(cand.get("value"))
    v.baseline_value, v.candidate_value = b, c
    v.n_baseline, v.n_candidate = len(base.get("samples") or []), len(cand.get("samples") or [])
    if c is None:
        v.status, v.reason = "insufficient data", "candidate has no value"
        return
    tol = _finite((cand.get("stats") or {}).get("tolerance"))
    if tol is None:
        tol = _finite((base.get("stats") or {}).get("tolerance"))
    if b is not None and b > 0:
        v.change = (c - b) / b
    if tol is not None:
        v.bound = tol
        if c > tol:
            v.status, v.reason = "failed correctness", f"error {c:.3g} exceeds the tolerance {tol:.3g}"
            v.new_failure = base.get("status") == "ok"
        else:
            v.status = "stable"
            v.reason = f"error {c:.3g} within the tolerance {tol:.3g}"
        return
    if b is None:
        v.status, v.reason = "insufficient data", "no baseline value and no stored tolerance"
        return
    v.bound = b * (1 + slack) if b > 0 else 0.0
    if c > v.bound:
        v.status, v.reason = "regressed", f"error {c:.3g} above baseline {b:.3g} x (1+{slack}) (no tolerance stored)"
    elif b > 0 and c < b / (1 + slack):
        v.status, v.reason = "improved", f"error {c:.3g} below baseline {b:.3g} / (1+{slack})"
    else:
        v.status, v.reason = "stable", f"error {c:.3g} within baseline {b:.3g} x (1+{slack})"


def judge_retrieval(v: SeriesVerdict, base: dict, cand: dict, eps: float = 1e-9) -> None:
    """Recall and the like may not fall (absolute comparison of the values)."""
    b, c = _finite(base.get("value")), _finite(cand.get("value"))
    v.baseline_value, v.candidate_value, v.bound = b, c, b
    if b is None or c is None:
        v.status, v.reason = "insufficient data", "a side has no value"
        return
    v.change = (c - b) / b if b else None
    worse = (b - c) if v.direction == "higher" else (c - b)
    if worse > eps:
        v.status, v.reason = "regressed", f"{v.key.metric} fell from {b:.4g} to {c:.4g} (may not fall)"
    elif worse < -eps:
        v.status, v.reason = "improved", f"{v.key.metric} rose from {b:.4g} to {c:.4g}"
    else:
        v.status, v.reason = "stable", f"{v.key.metric} unchanged at {c:.4g}"


def judge(key: SeriesKey, base: Optional[dict], cand: dict, th: Thresholds,
          other_machine: bool = False, accuracy_slack: float = 0.25) -> SeriesVerdict:
    """The verdict on one candidate row against its baseline row (None when there is none)."""
    kind = metric_kind(key.metric, cand.get("unit", ""))
    v = SeriesVerdict(key, "stable", kind, cand.get("unit", ""), cand.get("direction", "lower"),
                      dict(cand.get("params") or {}))
    base_ok = base is not None and base.get("status") == "ok"
    if cand["status"] == "error":
        v.status, v.reason = "errored", (cand.get("error") or "error")[:400]
        v.new_failure = base is None or base.get("status") != "error"
    elif cand["status"] == "failed_correctness":
        v.status, v.reason = "failed correctness", (cand.get("error") or "failed correctness")[:400]
        expected = (cand.get("stats") or {}).get("expected_failure") or known_failure(key.technique, key.impl, key.case_id)
        if expected:  # kept to show the harness catches it: reported, never blocking
            v.reason = f"expected ({expected}): {v.reason}"[:400]
        v.new_failure = not expected and (base is None or base.get("status") != "failed_correctness")
    elif cand["status"] == "skipped":
        v.status, v.reason = "insufficient data", f"skipped: {cand.get('error') or ''}"[:400]
    elif base is None:
        v.status = "missing baseline"
        v.reason = ("the baseline has this benchmark only on other hardware/software/protocol; not compared"
                    if other_machine else "no baseline for this series")
        v.candidate_value = _finite(cand.get("value"))
    elif not base_ok:
        v.status = "improved"
        v.reason = f"baseline was {base.get('status')}, candidate passes"
        v.candidate_value = _finite(cand.get("value"))
    elif kind == "timing":
        judge_timing(v, base, cand, th)
    elif kind == "error":
        judge_error(v, base, cand, accuracy_slack)
    else:
        judge_retrieval(v, base, cand)
    return v


def pair_rows(base: RunData, cand: RunData) -> tuple[list[tuple[SeriesKey, Optional[dict], dict, bool]], list[SeriesKey]]:
    """Candidate rows with their same-fingerprint baseline rows; and baseline keys absent in the candidate."""
    bmap = {key_of_row(r, base.hardware_key, base.software_key): r for r in base.rows}
    subjects = {k.subject for k in bmap}
    pairs = []
    seen = set()
    for r in cand.rows:
        k = key_of_row(r, cand.hardware_key, cand.software_key)
        b = bmap.get(k)
        if b is None and r["status"] in ("error", "failed_correctness", "skipped"):
            # A failed row has no protocol; match it to the baseline's series of the same subject.
            b = next((row for kk, row in bmap.items() if kk.subject == k.subject
                      and kk.hardware_key == k.hardware_key and kk.software_key == k.software_key), None)
            if b is not None:
                k = key_of_row(b, base.hardware_key, base.software_key)
        seen.add(k)
        pairs.append((k, b, r, b is None and k.subject in subjects))
    dropped = [k for k in bmap if k not in seen and k.subject not in {s.subject for s in seen}]
    return pairs, dropped
