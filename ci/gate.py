"""`kwatch gate`: compare a candidate run with a baseline run, series by series; exit 1 on regression."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console

from ci.gate_ab import measure_ab
from ci.gate_compare import SEVERITY, SeriesVerdict, pair_rows
from ci.gate_mutes import active_mutes, matching_mute
from ci.gate_refs import RefError, RunData, resolve
from ci.gate_remeasure import remeasure
from ci.gate_vanished import Missing, classify, summary_line, unfinished
from ci.report_gate import COMMENT_LIMIT, to_json, to_markdown
from db.engine import open_db
from db.spread_history import table_for_url
from db.models_ci import GateReport
from db.verdict import Thresholds, interleaved, judge
from db.verdict.identity import difference, hardware_differs, host_unknown, other_host
from db.verdict.judge import samples_comparison, settle

console = Console(stderr=True)
TIMED = ("timing", "throughput")


@dataclass
class GateResult:
    baseline: RunData
    candidate: RunData
    thresholds: Thresholds
    verdicts: list[SeriesVerdict]
    dropped: list = field(default_factory=list)  # baseline series absent from the candidate
    remeasure_note: Optional[str] = None
    created_at: str = field(default_factory=lambda: datetime.now(timezone.utc).isoformat(timespec="seconds"))
    missing: list[Missing] = field(default_factory=list)  # dropped, each vanished or removed on purpose
    n_shared: int = 0  # candidate series judged against a baseline row

    @property
    def vanished(self) -> list[Missing]:
        """Baseline series missing from the candidate and not removed on purpose: they block."""
        return [m for m in self.missing if m.blocking]

    @property
    def unfinished(self) -> str:
        """Why series vanished where the candidate run stopped part-way ("" when none vanished or it finished)."""
        return unfinished(self.candidate.run) if self.vanished else ""

    @property
    def other_host(self) -> str:
        """How the two runs' machines differ ('' for one host, or where they did not record it)."""
        return other_host(self.baseline.run.get("env") or {}, self.candidate.run.get("env") or {})

    @property
    def host_unknown(self) -> str:
        """Why runs taken for one machine may be two ('' where both name their GPU, or they differ on record)."""
        return host_unknown(self.baseline.run.get("env") or {}, self.candidate.run.get("env") or {})

    @property
    def nothing_compared(self) -> str:
        """Why nothing was compared ("" when something was): the baseline has series, none shared."""
        if self.n_shared or not self.baseline.rows or not self.verdicts:
            return ""
        env_b, env_c = self.baseline.run.get("env") or {}, self.candidate.run.get("env") or {}
        diff = difference(env_b, env_c)
        if hardware_differs(env_b, env_c):
            return (f"nothing compared: the runs share no series (other GPU: {diff}); a gate compares one GPU "
                    "and one software stack; across hardware, use kwatch hardware")
        if diff:
            return (f"nothing compared: the runs share no series (other software: {diff}); measure the baseline "
                    "with the candidate's software, or compare across stacks with kwatch hardware")
        return "nothing compared: the candidate has none of the baseline's series (other techniques, cases or protocol)"

    @property
    def failed(self) -> bool:
        return any(v.blocking for v in self.verdicts) or bool(self.vanished) or bool(self.nothing_compared)

    @property
    def exit_code(self) -> int:
        """0 pass, 1 a blocking series (regression, new failure, vanished series), 3 nothing compared."""
        return 3 if self.nothing_compared else 1 if self.failed else 0

    def one_line(self) -> str:
        """The verdict in one line, for the console."""
        if self.nothing_compared:
            return f"gate: FAIL: {self.nothing_compared}"
        blocking = sum(v.blocking for v in self.verdicts)
        parts = [f"{blocking} blocking series"] if blocking else []
        if self.vanished:
            parts.append(summary_line(self.missing, self.unfinished))
        amb = sum(v.ambiguous for v in self.verdicts)
        counts = ", ".join(f"{n} {status}" for status, n in sorted(self.counts().items())) or "no series compared"
        head = "FAIL" if self.failed else "PASS"
        return (f"gate: {head}: " + "; ".join(parts + [f"series: {counts}"])
                + (f"; {amb} ambiguous (re-measure: --remeasure)" if amb else ""))

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for v in self.verdicts:
            out[v.label] = out.get(v.label, 0) + 1
        return out

    def ordered(self) -> list[SeriesVerdict]:
        """Worst first: blocking, then by status severity, then by how much worse."""
        return sorted(self.verdicts, key=lambda v: (not v.blocking, SEVERITY.get(v.status, 99),
                                                    -(_worse(v) or 0.0), v.key.label()))


def _worse(v: SeriesVerdict) -> Optional[float]:
    if v.change is None:
        return None
    return v.change if v.direction == "lower" else -v.change


def _rejudge(v: SeriesVerdict, base: dict, cand: dict, fresh: dict, th: Thresholds) -> None:
    """Decide an ambiguous timing series on the pooled original and fresh candidate samples."""
    pooled = {**cand, "samples": list(cand.get("samples") or []) + list(fresh.get("samples") or [])}
    c = samples_comparison(base, pooled, v.direction, th, hardware_key=v.key.hardware_key)
    first = v.reason
    v.change, v.ci, v.p_value = c.change, (c.ci_low, c.ci_high), c.p_value
    v.candidate_value, v.n_candidate = c.median_candidate, c.n_candidate
    v.remeasured = True
    v.status = settle(c, th.for_protocol(v.key.protocol))
    v.ambiguous = False
    v.reason = (f"re-measured ({len(fresh.get('samples') or [])} fresh samples pooled): median change "
                f"{c.change:+.2%}, 95% CI {c.ci_low:+.1%}..{c.ci_high:+.1%}, p={c.p_value:.2g}; first: {first}")


def _confirm(v: SeriesVerdict, base: dict, fresh: dict, th: Thresholds) -> None:
    """A timing regression stands only if the fresh candidate samples alone regress too."""
    c = samples_comparison(base, fresh, v.direction, th, hardware_key=v.key.hardware_key)
    first = f"first measurement {v.change:+.1%} (p={v.p_value:.2g})"
    v.remeasured = True
    if c.outcome == "regressed":
        v.reason = (f"confirmed on re-measurement: median change {c.change:+.2%}, 95% CI "
                    f"{c.ci_low:+.1%}..{c.ci_high:+.1%}, p={c.p_value:.2g}; {first}")
        return
    v.change, v.ci, v.p_value = c.change, (c.ci_low, c.ci_high), c.p_value
    v.candidate_value, v.n_candidate = c.median_candidate, c.n_candidate
    v.status = c.outcome if c.outcome in ("improved", "stable") else "insufficient data"
    v.reason = (f"not confirmed: re-measured median change {c.change:+.2%}, 95% CI "
                f"{c.ci_low:+.1%}..{c.ci_high:+.1%}, p={c.p_value:.2g} ({c.outcome}); {first}")
    v.flags.append(f"a regression of the first measurement ({first}) was not confirmed on re-measurement")


def _apply_remeasure(result: GateResult, pairs_by_key: dict, cand: RunData, th: Thresholds) -> None:
    subjects = set()
    for v in result.verdicts:
        if v.ambiguous or v.flags or (v.kind in TIMED and v.status in ("improved", "regressed")):
            subjects.add(v.key.subject[:3])
    if not subjects:
        result.remeasure_note = "nothing needed re-measuring"
        return
    m = remeasure(cand, subjects)
    if m.host_problem:
        result.remeasure_note = f"could not re-measure: {m.host_problem}"
        return
    result.remeasure_note = f"re-measured {len(subjects)} implementation/case pairs in run {m.run_id}"
    for v in result.verdicts:
        subj = v.key.subject[:3]
        if subj not in subjects:
            continue
        if subj in m.refused:
            v.flags.append(f"not re-measured: {m.refused[subj]}")
            continue
        fresh = m.rows.get(v.key.subject)
        err_row = m.rows.get((*subj, "rel_err"))
        recheck_failed = any(r and r["status"] == "failed_correctness" for r in (fresh, err_row))
        if recheck_failed:
            why = (fresh or err_row).get("error") or "failed correctness"
            v.status, v.new_failure, v.remeasured = "failed correctness", True, True
            v.reason = f"re-check on fresh inputs failed: {why}"[:400]
            continue
        if fresh is None or fresh["status"] != "ok":
            v.flags.append("re-measure gave no usable row" + (f": {fresh['error']}" if fresh and fresh.get("error") else ""))
            continue
        if any(f.startswith("suspicious speedup") for f in v.flags):
            v.flags.append("correctness re-checked on fresh inputs: passes")
        base, cand_row = pairs_by_key[v.key]
        if v.ambiguous and v.kind in TIMED:
            _rejudge(v, base, cand_row, fresh, th)
        elif v.kind in TIMED and v.status == "regressed":
            _confirm(v, base, fresh, th)
        else:
            v.remeasured = True
            v.reason += "; re-checked on fresh inputs: correct"


def run_gate(baseline: RunData, candidate: RunData, th: Thresholds = Thresholds(), mutes: list[dict] = (),
             do_remeasure: bool = False, allow_removed: tuple[str, ...] = ()) -> GateResult:
    """Judge every candidate series against the baseline's series of the same fingerprint; baseline
    series missing from the candidate block unless removed on purpose (ci.gate_vanished)."""
    pairs, dropped = pair_rows(baseline, candidate)
    ab = interleaved(baseline.run, candidate.run)  # one A/B job: judged on its own spread
    verdicts, by_key = [], {}
    env_b, env_c = baseline.run.get("env") or {}, candidate.run.get("env") or {}
    host, unknown = other_host(env_b, env_c), host_unknown(env_b, env_c)
    for key, base, cand, other_machine in pairs:
        v = judge(base, cand, th, key, other_machine, ab, host, unknown)
        v.muted = matching_mute(key, list(mutes))
        verdicts.append(v)
        by_key[key] = (base, cand)
    result = GateResult(baseline, candidate, th, verdicts, dropped, n_shared=sum(b is not None for _, b, _, _ in pairs))
    if result.n_shared:  # with nothing shared, nothing can vanish
        result.missing = classify(dropped, candidate.run, allow_removed)
    if do_remeasure:
        _apply_remeasure(result, by_key, candidate, th)
    else:
        result.remeasure_note = "re-measuring was not requested (--remeasure)"
    return result


def _store(result: GateResult, report: dict, db: Optional[str]) -> None:
    with open_db(db)() as s, s.begin():
        s.add(GateReport(created_at=datetime.now(timezone.utc), baseline_ref=result.baseline.ref[:512],
                         candidate_ref=result.candidate.ref[:512], baseline_run_id=result.baseline.run_id,
                         candidate_run_id=result.candidate.run_id, verdict="fail" if result.failed else "pass",
                         counts=result.counts(), report=report))


def gate_cmd(baseline: Optional[str] = typer.Option(None, "--baseline", "-b", help="run id, result file, branch or commit"),
             candidate: Optional[str] = typer.Option(None, "--candidate", "-c", help="run id, result file, branch or commit"),
             ab: Optional[tuple[str, str]] = typer.Option(None, "--ab", metavar="BASE_REF HEAD_REF",
                                                          help="measure both revisions here, interleaved, and gate them"),
             technique: Optional[list[str]] = typer.Option(None, "--technique", "-t", help="with --ab; repeatable"),
             impl: Optional[list[str]] = typer.Option(None, "--impl", "-i", help="with --ab; repeatable"),
             case: Optional[list[str]] = typer.Option(None, "--case", help="with --ab; repeatable"),
             rounds: int = typer.Option(5, "--rounds", min=1, help="with --ab: rounds per case and side"),
             markdown: Optional[Path] = typer.Option(None, "--markdown", help="write the full Markdown report here"),
             comment: Optional[Path] = typer.Option(None, "--comment", help="write the PR comment here: the report "
                                                    "within GitHub's comment limit, whole rows only, the rest named"),
             comment_reserve: int = typer.Option(1000, "--comment-reserve",
                                                 help="characters of the comment limit left to the poster's own lines"),
             json_out: Optional[Path] = typer.Option(None, "--json", help="write the JSON report here"),
             db: Optional[str] = typer.Option(None, "--db", help="database URL (refs, mutes, stored report)"),
             tier: Optional[str] = typer.Option(None, "--tier", help="only runs of this tier when resolving refs"),
             alpha: float = typer.Option(0.01, "--alpha", help="Mann-Whitney U significance level"),
             min_effect: float = typer.Option(0.05, "--min-effect", help="minimum relative change of medians"),
             host_min_effect: float = typer.Option(0.25, "--host-min-effect",
                                                   help="minimum change for CPU / pytest-benchmark timings"),
             gate_host_timings: bool = typer.Option(False, "--gate-host-timings",
                                                    help="let host-timer (CPU) timings fail the gate; "
                                                         "by default they are shown, never blocking"),
             remeasure: bool = typer.Option(False, "--remeasure", help="re-run ambiguous/suspicious series here"),
             allow_removed: Optional[list[str]] = typer.Option(None, "--allow-removed", metavar="TECH[/IMPL[/CASE]]",
                                                               help="baseline series the change removes on purpose "
                                                                    "(repeatable); others missing from the candidate block"),
             store: bool = typer.Option(False, "--store", help="store the report in the database")) -> None:
    """Gate a candidate against a baseline: exit 1 on any regression or new failure."""
    try:
        if ab:  # the A/B files stand in for the refs; --tier is the tier they are measured in
            baseline, candidate = map(str, measure_ab(*ab, tier or "nightly", technique, impl, case, rounds))
        if not (baseline and candidate):
            raise ValueError("give --baseline and --candidate, or --ab BASE_REF HEAD_REF")
        base, cand = resolve(baseline, db, tier), resolve(candidate, db, tier)
    except (RefError, ValueError, RuntimeError) as exc:
        console.print(f"[red]gate:[/red] {exc}")
        raise typer.Exit(2)
    th = Thresholds(alpha=alpha, min_effect=min_effect, host_min_effect=host_min_effect,
                    gate_host_timings=gate_host_timings, spreads=table_for_url(db, {cand.run_id}))
    result = run_gate(base, cand, th, active_mutes(db), remeasure, tuple(allow_removed or ()))
    report = to_json(result)
    md = to_markdown(result)
    if markdown:
        markdown.write_text(md)
    if comment:
        comment.write_text(to_markdown(result, COMMENT_LIMIT - comment_reserve,
                                       "the full report (gate.md in the workflow artifact linked above)"))
    if json_out:
        json_out.write_text(json.dumps(report, indent=1, default=str))
    if store:
        _store(result, report, db)
    if not (markdown or json_out):
        print(md)
    console.print(result.one_line(), highlight=False, markup=False, soft_wrap=True)
    raise typer.Exit(result.exit_code)

