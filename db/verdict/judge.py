"""`judge(baseline, candidate) -> Verdict`: the one decision on a series, used by the gate, the
nightly report and every dashboard page. Rows are result-file rows (dicts as in the result file)."""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any, Optional

from db.verdict import rules as R
from db.verdict.ab import compare_ab, log_rounds, round_spread
from db.verdict.counts import counts_of
from db.verdict.spread import TimingSpread
from db.verdict.spread import key_of as spread_key
from db.verdict.stats import FISHER_MAX, Comparison, compare_counts, compare_rates, compare_samples, finite, n_samples
from db.verdict.two_hosts import judge_other_host, note_host_unknown
from suite.registry import known_failure, time_depends_on_data


@dataclass
class Verdict:
    """The decision on one series, with its figures and the reasons."""

    status: str
    kind: str
    unit: str = ""
    direction: str = "lower"
    params: dict = field(default_factory=dict)
    key: Any = None  # db.series.SeriesKey where the caller has one
    baseline_value: Optional[float] = None
    candidate_value: Optional[float] = None
    change: Optional[float] = None  # (candidate - baseline) / baseline
    ci: Optional[tuple[float, float]] = None  # 95% CI of change
    p_value: Optional[float] = None
    n_baseline: int = 0  # samples, or trials (n) of a quality fraction
    n_candidate: int = 0
    k_baseline: Optional[int] = None  # successes of a quality fraction
    k_candidate: Optional[int] = None
    bound: Optional[float] = None  # absolute bound of an error metric
    reason: str = ""
    gated: bool = True  # False: shown, never blocking (host-timer timings unless asked)
    new_failure: bool = False
    muted: Optional[dict] = None
    remeasured: bool = False
    flags: list[str] = field(default_factory=list)
    ambiguous: bool = False

    @property
    def blocking(self) -> bool:
        """Does this series fail the gate (a gated regression or a new failure, not muted)?"""
        if self.muted:
            return False
        return (self.status == R.REGRESSED and self.gated) or self.new_failure

    @property
    def label(self) -> str:
        """The status as shown: a change that does not gate says so."""
        if not self.gated and self.status in (R.REGRESSED, R.IMPROVED):
            return f"{self.status} (host timer, not gated)"
        return self.status

    def as_dict(self) -> dict:
        d = asdict(self)
        d["key"] = self.key.as_dict() if hasattr(self.key, "as_dict") else self.key
        d["blocking"], d["label"] = self.blocking, self.label
        return d


def _finite(x) -> Optional[float]:
    return float(x) if isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) else None


def expected_failure(row: dict) -> str:
    """Why a failed row is expected ("" when it is not): a known-wrong implementation or a probe point."""
    st = row.get("stats") or {}
    if st.get("expected_failure"):
        return str(st["expected_failure"])
    if st.get("probe"):
        return "probe point: its failed correctness is a measurement"
    return known_failure(row["technique"], row["impl"], row["case"])


def error_bound(row: Optional[dict]) -> Optional[float]:
    """The absolute bound of an error row: its stored tolerance (None where none is stored, as on
    probe points, whose error is a measurement)."""
    return _finite(((row or {}).get("stats") or {}).get("tolerance"))


def clock_drop(row: dict, tolerance: float = R.Thresholds.clock_drop) -> Optional[tuple[float, float]]:
    """(clock before, clock after) in MHz when the SM clock fell by more than `tolerance` while the
    row was measured (power or thermal throttling), else None. Rows without clocks (CPU) give None."""
    st = row.get("stats") or {}
    before, after = _finite(st.get("sm_clock_before_mhz")), _finite(st.get("sm_clock_after_mhz"))
    if before and after and after < before * (1 - tolerance):
        return before, after
    return None


def instances_differ(base: dict, cand: dict) -> bool:
    """True unless both rows were timed on the same input instance (the same stats.timing_seed, or for rows
    from before 014ca01, which drew the timing instance from the run's seeds, the same stats.seeds): a
    data-dependent kernel's time moved with the draw."""
    (sa, a), (sb, b) = (((r.get("stats") or {}), (r.get("stats") or {}).get("timing_seed")) for r in (base, cand))
    if a is None and b is None:
        return not sa.get("seeds") or sa.get("seeds") != sb.get("seeds")
    return a is None or a != b


def apply(v: Verdict, c: Comparison) -> None:
    """Copy a comparison's figures into the verdict."""
    v.baseline_value, v.candidate_value = _finite(c.median_baseline), _finite(c.median_candidate)
    v.change = _finite(c.change)
    v.ci = (c.ci_low, c.ci_high) if _finite(c.ci_low) is not None else None
    v.p_value = _finite(c.p_value)
    v.n_baseline, v.n_candidate = c.n_baseline, c.n_candidate


def _hardware_key(v: Verdict, cand: dict) -> str:
    """The hardware the candidate ran on: the verdict's series key (gate), else the row's own (dashboard)."""
    return getattr(v.key, "hardware_key", "") or cand.get("hardware_key") or ""


def _series_key(cand: dict, hardware_key: str = "") -> tuple:
    """The row's key in the spread table (its hardware: the verdict's, else the row's own)."""
    return spread_key(cand, hardware_key or cand.get("hardware_key") or "")


def series_spread(cand: dict, th: R.Thresholds, hardware_key: str = "", base: Optional[dict] = None) -> Optional[TimingSpread]:
    """The series' own run-to-run spread learned from earlier same-code runs, where it is wider than
    its protocol's, or narrower where enough history says so (None: the protocol's spread decides).
    A history from before 014ca01 drew an instance per run, so its spread holds the draw's too."""
    protocol = (cand.get("stats") or {}).get("protocol") or ""
    if R.host_timer(protocol):
        return None
    s = th.spread_table().timing(_series_key(cand, hardware_key), th.run_cv(protocol))
    return s


def samples_comparison(base: dict, cand: dict, direction: str, th: R.Thresholds, ab: bool = False,
                       hardware_key: str = "") -> Comparison:
    """The samples test with the thresholds of the rows' protocol and the series' learned spread; ab:
    the rows are the two sides of one interleaved A/B, judged on its own round-to-round spread at the
    A/B's confidence."""
    protocol = (cand.get("stats") or {}).get("protocol") or ""
    t = th.for_protocol(protocol)
    if ab and not R.host_timer(protocol):
        return compare_ab(base, cand, direction, t)
    s = series_spread(cand, th, hardware_key, base)
    return compare_samples(base.get("samples"), cand.get("samples"), direction, t.alpha,
                           t.min_effect, t.min_samples, t.run_cv(protocol),
                           (s.sigma, s.quantile, s.narrower) if s else None)


def _spread_text(base: dict, cand: dict, protocol: str, t: R.Thresholds, ab: bool, hardware_key: str) -> str:
    if ab and not R.host_timer(protocol):
        lb, lc = log_rounds(base), log_rounds(cand)
        return (f"the A/B's own {round_spread(lb, lc, t):.1%} round-to-round spread over {len(lb)}+{len(lc)} "
                f"rounds, decided at z={t.ab_z:g}")
    s = series_spread(cand, t, hardware_key, base)
    if s is not None:
        return (f"this series' own {s.sigma:.1%} run-to-run spread, learned from {s.history_df} degrees of "
                f"freedom of same-code runs, at {'z' if s.narrower else 't'}={s.quantile:.2f}"
                + (f" (narrower than the protocol's {t.run_cv(protocol):.1%})" if s.narrower else ""))
    return f"the protocol's {t.run_cv(protocol):.1%} run-to-run spread"


def settle(c: Comparison, th: R.Thresholds) -> str:
    """The status of a samples comparison that must decide (pooled after re-measurement): an
    ambiguous one is decided on significance and the point estimate."""
    if c.outcome in (R.REGRESSED, R.IMPROVED, R.STABLE):
        return c.outcome
    sig = _finite(c.p_value) is not None and c.p_value < th.alpha
    return (R.REGRESSED if sig and c.worse >= th.min_effect else
            R.IMPROVED if sig and c.worse <= -th.min_effect else R.STABLE)


def _timing(v: Verdict, base: dict, cand: dict, th: R.Thresholds, ab: bool = False, other_host: str = "") -> None:
    protocol = (cand.get("stats") or {}).get("protocol") or ""
    t = th.for_protocol(protocol)
    hw = _hardware_key(v, cand)
    c = samples_comparison(base, cand, v.direction, th, ab, hw)
    spread = _spread_text(base, cand, protocol, t, ab, hw)
    effect = t.ab_min_effect if ab and not R.host_timer(protocol) else t.min_effect
    apply(v, c)
    v.ambiguous = c.outcome == "ambiguous"
    if c.outcome == "insufficient":
        v.status = R.INSUFFICIENT
        v.reason = f"too few samples (baseline {c.n_baseline}, candidate {c.n_candidate}; need {t.min_samples})"
    elif c.outcome == "ambiguous":
        v.status = R.INSUFFICIENT
        v.reason = (f"ambiguous: change {c.change:+.1%} (95% CI {c.ci_low:+.1%}..{c.ci_high:+.1%} with "
                    f"{spread}, p={c.p_value:.2g}) neither clears nor fails the {effect:.0%} effect; "
                    "re-measure (--remeasure beside a runner" + (", or more A/B rounds)" if ab else ")"))
    else:
        v.status = c.outcome
        in_time = f" ({c.worse:+.2%} in time per unit of work)" if v.kind == R.THROUGHPUT else ""
        v.reason = (f"Mann-Whitney U p={c.p_value:.2g}, median change {c.change:+.2%}{in_time} "
                    f"(needs p<{t.alpha}, >= {effect:.0%}, and a CI clear of 0 with {spread})")
    if R.host_timer(protocol) and not th.gate_host_timings:
        v.gated = False
        v.reason += "; host timer on a shared CPU: shown, not gated (--gate-host-timings gates it)"
    mb, mc = c.median_baseline, c.median_candidate
    if _finite(mb) and _finite(mc) and mb > 0 and mc > 0:
        speedup = mb / mc if v.direction == "lower" else mc / mb
        if speedup > th.suspicious_speedup:
            v.flags.append(f"suspicious speedup {speedup:.1f}x (> {th.suspicious_speedup:.0f}x): "
                           "correctness must be re-checked on fresh inputs")
    if v.status in (R.REGRESSED, R.IMPROVED) and instances_differ(base, cand):
        if time_depends_on_data(cand.get("technique") or base.get("technique") or ""):
            # the spec says this kernel's time moves with the pattern: the difference is not the code's alone
            v.status, v.ambiguous = R.INSUFFICIENT, True
            v.reason = (f"{c.change:+.1%} between different input instances of a kernel whose time depends on "
                        "the data (a run before 014ca01 drew its own pattern): re-measure both on one instance "
                        f"(kwatch gate --ab, or runs since 014ca01); first: {v.reason}")
        else:
            v.flags.append("timed on different input instances (a run before 014ca01 drew its own): where the "
                           "kernel's time depends on the data (a sparse pattern, a selection), part of a difference "
                           "may be the draw, not the code")
    if other_host and not ab:
        judge_other_host(v, base, cand, other_host)
    if v.status in (R.REGRESSED, R.IMPROVED) or v.ambiguous:  # a stable series' clocks are no news
        for side, row in (("baseline", base), ("candidate", cand)):
            drop = clock_drop(row, th.clock_drop)
            if drop:
                v.flags.append(f"SM clock fell during the {side}'s measurement ({drop[0]:.0f} -> {drop[1]:.0f} "
                               "MHz): the GPU throttled, so part of a difference may be the clock, not the code")
    if v.status == R.REGRESSED and clock_drop(cand, th.clock_drop):
        _clock_normalised(v, base, cand, th, ab, hw)
    if v.status == R.REGRESSED and not ab and not R.host_timer(protocol):
        _unsteady(v, base, cand, t, protocol, hw)


def _unsteady(v: Verdict, base: dict, cand: dict, th: R.Thresholds, protocol: str, hw: str) -> None:
    """A regression of a series with no same-code history whose samples scatter within a run far beyond the
    protocol's run-to-run spread (Thresholds.unsteady_cv) is ambiguous: such series move between runs of
    the same code by more than the protocol's spread says."""
    cv = th.run_cv(protocol)
    sides = [_finite((row.get("stats") or {}).get("rel_spread")) for row in (base, cand)]
    worst = max((x for x in sides if x is not None), default=None)
    if not cv or worst is None or worst < th.unsteady_cv * cv or th.spread_table().has_history(_series_key(cand, hw)):
        return
    v.status, v.ambiguous = R.INSUFFICIENT, True
    shown = ", ".join(f"{side} {x:.1%}" for side, x in zip(("baseline", "candidate"), sides) if x is not None)
    v.reason = (f"unsteady: {v.change:+.1%}, but the samples scatter within a run ({shown} stdev/mean) over "
                f"{th.unsteady_cv:g}x the protocol's {cv:.1%} run-to-run spread and no same-code runs of this "
                f"series here show how far it moves: re-measure (--remeasure); first: {v.reason}")


def mean_clock(row: dict) -> Optional[float]:
    """The SM clock a row was measured at, as the mean of its clock before and after (None without clocks)."""
    st = row.get("stats") or {}
    before, after = _finite(st.get("sm_clock_before_mhz")), _finite(st.get("sm_clock_after_mhz"))
    return (before + after) / 2 if before and after else None


def _clock_normalised(v: Verdict, base: dict, cand: dict, th: R.Thresholds, ab: bool, hw: str) -> None:
    """A regression measured while the candidate's SM clock fell stands only if it regresses on
    clock-normalised time too (each side's samples scaled to the baseline's mean clock; a time or a
    rate alike); otherwise it is ambiguous and re-measured: a throttled clock never blocks on its own."""
    cb, cc = mean_clock(base), mean_clock(cand)
    if not (cb and cc):
        return
    f = cc / cb if v.direction == "lower" else cb / cc  # time x clock ratio: the work in cycles
    scaled = {**cand, "samples": [x * f for x in finite(cand.get("samples"))]}
    c = samples_comparison(base, scaled, v.direction, th, ab, hw)
    if c.outcome == R.REGRESSED:
        v.flags.append(f"regressed on clock-normalised time too ({c.worse:+.1%} at the baseline's {cb:.0f} MHz)")
        return
    v.status, v.ambiguous = R.INSUFFICIENT, True
    v.reason = (f"regressed only while the SM clock fell ({v.change:+.1%}; clock-normalised {c.worse:+.1%} at the "
                f"baseline's {cb:.0f} MHz, {c.outcome}): re-measure on a steady clock (--remeasure); first: {v.reason}")


def _error(v: Verdict, base: dict, cand: dict) -> None:
    b, c = _finite(base.get("value")), _finite(cand.get("value"))
    v.baseline_value, v.candidate_value = b, c
    v.n_baseline, v.n_candidate = n_samples(base.get("samples")), n_samples(cand.get("samples"))
    if b is not None and c is not None and b > 0:
        v.change = (c - b) / b
    bound = error_bound(cand)
    v.bound = bound if bound is not None else error_bound(base)
    if v.bound is None:
        v.status = R.STABLE if b == c else R.INSUFFICIENT
        v.reason = ("unchanged; no tolerance or bound stored" if b == c else
                    "no tolerance or bound stored: the error is shown, not judged")
    elif c > v.bound:
        v.status, v.reason = R.FAILED, f"error {c:.3g} exceeds the bound {v.bound:.3g}"
        v.new_failure = b is None or b <= v.bound
    else:
        v.status, v.reason = R.STABLE, f"error {c:.3g} within the bound {v.bound:.3g}"


def _fraction(v: Verdict, base: dict, cand: dict, th: R.Thresholds) -> None:
    b, c = _finite(base.get("value")), _finite(cand.get("value"))
    v.baseline_value, v.candidate_value = b, c
    v.change = (c - b) / b if b and c is not None else None
    cb, cc = counts_of(base), counts_of(cand)
    if cb is None or cc is None:
        v.status = R.STABLE if b == c else R.INSUFFICIENT
        v.reason = ("unchanged; n unknown" if b == c else
                    f"{cand['metric']}: n unknown (no counts stored), so the change is shown, not judged")
        return
    (kb, nb), (kc, nc) = cb, cc
    v.k_baseline, v.n_baseline, v.k_candidate, v.n_candidate = kb, nb, kc, nc
    disp = th.spread_table().dispersion(spread_key(cand, _hardware_key(v, cand)))
    scaled, note = (kb, nb, kc, nc), ""
    if disp is not None:  # trials of one run share their seed: n/phi independent trials, k scaled alike
        phi, df = disp
        scaled = (kb / phi, nb / phi, kc / phi, nc / phi)
        scaled = tuple(int(round(x)) for x in scaled)
        scaled = (scaled[0], max(scaled[1], 1, scaled[0]), scaled[2], max(scaled[3], 1, scaled[2]))
        note = (f"; runs of the same code scatter {phi:.1f}x the binomial variance ({df} degrees of freedom), "
                f"so judged as {scaled[0]}/{scaled[1]} -> {scaled[2]}/{scaled[3]} independent trials")
    cmp = compare_counts(*scaled, v.direction, th.alpha, th.quality_min_effect)
    v.p_value, v.status = cmp.p_value, cmp.outcome
    test = "Fisher's exact" if min(scaled[1], scaled[3]) <= FISHER_MAX else "two-proportion z"
    v.reason = (f"{kb}/{nb} -> {kc}/{nc}: {test} p={cmp.p_value:.2g}, change {kc / nc - kb / nb:+.3g} "
                f"(needs p<{th.alpha} and >= {th.quality_min_effect:g} absolute){note}")


def _count(v: Verdict, base: dict, cand: dict, th: R.Thresholds) -> None:
    b, c = _finite(base.get("value")), _finite(cand.get("value"))
    v.baseline_value, v.candidate_value = b, c
    if b is None or c is None:
        v.status, v.reason = R.INSUFFICIENT, "a side has no count"
        return
    cmp = compare_rates(int(round(b)), int(round(c)), v.direction, th.alpha, th.count_min_effect)
    v.change, v.p_value, v.status = _finite(cmp.change), cmp.p_value, cmp.outcome
    v.reason = (f"count {b:g} -> {c:g}: exact Poisson test p={cmp.p_value:.2g} "
                f"(needs p<{th.alpha} and >= {th.count_min_effect:.0%})")


def _value(v: Verdict, base: dict, cand: dict) -> None:
    b, c = _finite(base.get("value")), _finite(cand.get("value"))
    v.baseline_value, v.candidate_value = b, c
    v.change = (c - b) / b if b and c is not None else None
    v.status = R.STABLE if b == c else R.INSUFFICIENT
    v.reason = "unchanged" if b == c else "a single value without samples, counts or a bound: shown, not judged"


def judge(baseline: Optional[dict], candidate: dict, th: R.Thresholds = R.Thresholds(), key: Any = None,
          other_machine: bool = False, ab: bool = False, other_host: str = "", host_unknown: str = "") -> Verdict:
    """The verdict on one candidate row against its baseline row (None when there is none); ab: the
    two rows are the sides of one interleaved A/B (db.verdict.ab.interleaved on their runs); other_host:
    how the two runs' machines differ (db.verdict.identity.other_host), '' for one host or unknown;
    host_unknown: why one machine on record may be two (db.verdict.identity.host_unknown), a caveat only."""
    cand, base = candidate, baseline
    kind = R.metric_kind(cand["metric"], cand.get("unit", ""))
    v = Verdict(R.STABLE, kind, cand.get("unit", ""), cand.get("direction", "lower"),
                dict(cand.get("params") or {}), key)
    base_ok = base is not None and base.get("status") == "ok"
    has = lambda r: _finite(r.get("value")) is not None or n_samples(r.get("samples")) > 0  # noqa: E731
    if cand["status"] == "error":
        v.status, v.reason = R.ERRORED, (cand.get("error") or "error")[:400]
        v.new_failure = base is None or base.get("status") != "error"
    elif cand["status"] == "failed_correctness":
        why = expected_failure(cand)
        v.status = R.EXPECTED if why else R.FAILED
        v.reason = (f"expected ({why}): " if why else "") + (cand.get("error") or "failed correctness")
        v.reason = v.reason[:400]
        v.new_failure = not why and (base is None or base.get("status") != "failed_correctness")
    elif cand["status"] == "skipped":
        v.status, v.reason = R.INSUFFICIENT, f"skipped: {cand.get('error') or ''}"[:400]
    elif not has(cand):
        v.status, v.reason = R.INSUFFICIENT, "the candidate has no value"
    elif base is None or base.get("status") == "skipped":
        v.status = R.MISSING
        v.reason = ("the baseline has this benchmark only on other hardware/software/protocol; not compared"
                    if other_machine else "no baseline for this series" if base is None
                    else f"the baseline skipped it: {base.get('error') or ''}"[:400])
        v.candidate_value = _finite(cand.get("value"))
    elif not base_ok:
        v.status, v.reason = R.IMPROVED, f"baseline was {base.get('status')}, candidate passes"
        v.candidate_value = _finite(cand.get("value"))
    elif kind in (R.TIMING, R.THROUGHPUT):
        _timing(v, base, cand, th, ab, other_host)
    elif kind == R.ERROR:
        _error(v, base, cand)
    elif kind == R.FRACTION:
        _fraction(v, base, cand, th)
    elif kind == R.COUNT:
        _count(v, base, cand, th)
    else:
        _value(v, base, cand)
    note_host_unknown(v, base, cand, host_unknown)
    return v
