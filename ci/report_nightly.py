"""Nightly report: Markdown summary and a self-contained HTML page with Plotly history plots."""
from __future__ import annotations

import html
from datetime import datetime

from ci.detect import Detected
from db.escape import md_code, md_text, plotly_text
from db.detector import DetectorSettings, nights_needed
from db.noise import resolution
from db.series import Point, SeriesKey
from db.verdict import COMPARED, EXPECTED, FAILING, metric_kind
from db.verdict.rules import THROUGHPUT, TIMING
from runners.budget import run_time
from suite.spec import NIGHTLY_BUDGET_S

_DET = DetectorSettings()


def _fmt(x) -> str:
    return "—" if x is None else (f"{x:.4g}" if abs(x) >= 1e-3 or x == 0 else f"{x:.3e}")


def too_noisy(series: dict[SeriesKey, list[Point]], min_nights: int = 8) -> list[dict]:
    """Timing series whose reference nights scatter too much for a 5% change to be found within 2 nights
    (db.noise.resolution: outlying nights and minority levels count), least resolving first."""
    out = []
    for key, pts in series.items():
        if key.metric != "latency_ms":
            continue
        r = resolution([p.value for p in pts if p.status == "ok" and p.value])
        if r["nights"] >= min_nights and r["too_noisy"]:
            out.append({"series": key.label(), "protocol": key.protocol, "nights": r["nights"],
                        "night_cv": r["night_cv"], "resolvable_step": r["resolvable_step"]})
    return sorted(out, key=lambda d: -d["resolvable_step"])


def detector_promise(s: DetectorSettings = _DET) -> str:
    """What the detector does with a new level, as the rule keeps it (db.detector)."""
    return (f"the detector alerts on a new level on its {s.confirm}rd night once the series has {s.min_short} "
            f"nights before it (a step of at least {s.short_min_rel:.0%} beyond those nights' own scatter while it "
            f"has fewer than {s.min_ref}); on a series too noisy for a 5% step, only on a step beyond its scatter "
            f"and after up to {nights_needed(s.min_ref, s)} nights; a step it missed is found later, once "
            f"{s.late_min} nights lie beyond every night before it")


def _gate_fails(v) -> tuple[bool, str]:
    """Whether a gated regression against the previous night fails the night, and why not. A timing or
    throughput waits for the detector: one night against one night cannot tell a level the series
    visits now and then (two levels, outlying nights) from a change, and the detector confirms a new
    level on its third night. Quality fractions and counts are judged on their counts and fail at once."""
    if v.muted:
        return False, f"no (muted by {v.muted['who']}: {v.muted['why']})"
    if metric_kind(v.key.metric) in (TIMING, THROUGHPUT):
        return False, "no (a timing: it waits for the change-point detector)"
    return True, "yes"


def new_histories(series: dict[SeriesKey, list[Point]], run_id: str, needed: int) -> list[dict]:
    """Series that began a new history in the last `needed` nights because their identity changed
    (timing protocol or software) while an older history of the same benchmark on the same hardware
    exists: detection is blind on them until they have `needed` nights. One row per kind of change."""
    by_subject: dict[tuple, list[SeriesKey]] = {}
    for key in series:
        by_subject.setdefault((key.subject, key.hardware_key), []).append(key)
    first = {k: min(p.started_at for p in pts) for k, pts in series.items() if pts}
    last = {k: max(p.started_at for p in pts) for k, pts in series.items() if pts}
    groups: dict[tuple[str, str], dict] = {}
    for key, pts in series.items():
        if len(pts) >= needed or run_id not in {p.run_id for p in pts}:
            continue
        older = [k for k in by_subject[(key.subject, key.hardware_key)] if k != key and k in first and first[k] < first[key]]
        if not older:
            continue  # a new benchmark, not a restarted one
        prev = max(older, key=last.__getitem__)
        if prev.protocol != key.protocol:
            change = ("timing protocol", f"{prev.protocol or '?'} -> {key.protocol or '?'}")
        else:
            change = ("software", "driver/CUDA/torch/triton/python changed")
        g = groups.setdefault(change, {"what": change[0], "change": change[1], "series": 0, "nights": len(pts)})
        g["series"] += 1
        g["nights"] = min(g["nights"], len(pts))
    return [{**g, "needed": needed} for g in sorted(groups.values(), key=lambda g: -g["series"])]


def run_dates(series: dict[SeriesKey, list[Point]]) -> dict[str, tuple]:
    """run id -> (started_at, git commit), from the series' points."""
    return {p.run_id: (p.started_at, p.git_commit) for pts in series.values() for p in pts}


def _when(started_at, commit) -> str:
    day = started_at.strftime("%Y-%m-%d %H:%M") if hasattr(started_at, "strftime") else str(started_at or "?")[:16]
    return f"{day} · {(commit or 'no commit')[:7]}"


def summarize(run_doc: dict, changes: list[Detected], verdicts, noisy: list[dict] | None = None,
              restarted: list[dict] | None = None, runs: dict[str, tuple] | None = None) -> dict:
    """Counts and lists the two renderings share; `verdicts` is this run judged against the previous
    run of its tier on the hardware (ci.nightly.night_verdicts). A gated regression against the previous
    night fails the night as _gate_fails says."""
    counts: dict[str, int] = {}
    for r in run_doc["results"]:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    new_reg = [c for c in changes if c.news]
    alerting = [c for c in changes if not c.acknowledged]
    vs = verdicts.ordered()
    failures = [{"series": v.key.label(), "status": v.status, "error": v.reason, "new": v.new_failure}
                for v in vs if v.status in FAILING]
    expected: dict[tuple, int] = {}
    for v in vs:
        if v.status == EXPECTED:
            why = v.reason[len("expected ("):].split("):")[0] if v.reason.startswith("expected (") else v.reason
            expected[(v.key.technique, v.key.impl, why)] = expected.get((v.key.technique, v.key.impl, why), 0) + 1
    base = verdicts.baseline
    regressed = []
    for v in vs:
        if v.status == "regressed" and v.gated:
            fails, note = _gate_fails(v)
            regressed.append({"series": v.key.label(), "change": v.change, "why": v.reason, "fails": fails,
                              "fails_the_night": note})
    night = {"baseline_run": base.run_id or None,
             "baseline_when": _when(base.run.get("started_at"), (base.run.get("git") or {}).get("commit")) if base.run_id else None,
             "compared": sum(v.status in COMPARED for v in vs), "regressed": regressed,
             "counts": verdicts.counts(), "nothing_compared": verdicts.nothing_compared if base.run_id else "",
             "vanished": [m.key.label() for m in verdicts.vanished], "unfinished": verdicts.unfinished}
    return {"run": run_doc["run"], "counts": counts, "new_regressions": new_reg, "alerting": alerting,
            "failing_against_previous": [r for r in regressed if r["fails"]],
            "late": [c for c in alerting if c.new and c.late],
            "acknowledged": [c for c in changes if c.acknowledged], "failures": failures,
            "new_failures": [f for f in failures if f["new"]], "too_noisy": noisy or [],
            "new_histories": restarted or [], "night": night, "runs": runs or {},
            "expected": [{"technique": t, "impl": i, "why": w, "series": n} for (t, i, w), n in expected.items()],
            "time": _time(run_doc)}


def _time(run_doc: dict) -> dict | None:
    """The run's wall time, its slowest techniques and, for a nightly on a GPU, its budget."""
    t = run_time(run_doc)
    if t is None:
        return None
    run = run_doc["run"]
    gpu_nightly = run.get("tier") == "nightly" and (run.get("env") or {}).get("device") == "cuda"
    budget = NIGHTLY_BUDGET_S if gpu_nightly else None
    return {**t, "budget_s": budget, "over_budget": budget is not None and t["wall_s"] > budget}


def _time_lines(t: dict | None) -> list[str]:
    """The run-time line (and, over budget, a section naming the techniques that take the time)."""
    if not t:
        return []
    slowest = ", ".join(f"{md_text(k)} {v / 60:.1f} min" for k, v in list(t["by_technique"].items())[:3])
    line = f"- run time: {t['wall_s'] / 60:.1f} min" + (f" of the nightly's {t['budget_s'] / 60:.0f}-min budget "
                                                         "on one GPU" if t["budget_s"] else "")
    line += (" — **over budget**" if t["over_budget"] else "") + (f" (slowest: {slowest})" if slowest else "")
    if not t["over_budget"]:
        return [line]
    return [line, "", "### Over the nightly budget", "",
            "The night took longer than its budget; it does not fail for that. `kwatch estimate --tier nightly` "
            "shows where the time goes; a variant kept only for the record can leave the nightly with "
            "`Impl(..., nightly=False)`.", "", "| technique | minutes |", "|---|---|",
            *(f"| {md_code(k)} | {v / 60:.1f} |" for k, v in list(t["by_technique"].items())[:10]), ""]


def _against(night: dict | None) -> str:
    """The line saying what this run was judged against, and how many series could be compared."""
    if not night:
        return "against the previous night: not judged"
    c = night["counts"]
    rest = (f"{c.get('expected failure', 0)} expected failures and probe points (measurements, not failing), "
            f"{c.get('insufficient data', 0) + c.get('missing baseline', 0)} not compared")
    if night.get("nothing_compared"):
        return f"against the previous night: **{md_text(night['nothing_compared'])}**; {rest}"
    if not night["baseline_run"] or not night["compared"]:
        why = "no previous run of this tier on this hardware" if not night["baseline_run"] else "no series in common"
        return f"against the previous night: nothing compared ({why}); {rest}"
    return (f"against the previous night ({md_text(night['baseline_when'])}, {md_code(night['baseline_run'], table=False)}): "
            f"{night['compared']} "
            f"series compared by the gate's rules: {len(night['regressed'])} regressed, {c.get('improved', 0)} improved, "
            f"{c.get('stable', 0)} stable; {rest}")


def failed(s: dict) -> bool:
    """Does the night fail: a new on-time detector regression, a new failure, or a gated regression
    against the previous night that is neither muted nor on a series named too noisy."""
    night = s.get("night") or {}
    return bool(s["new_regressions"] or s["new_failures"] or s.get("failing_against_previous")
                or night.get("nothing_compared") or night.get("vanished"))


def to_markdown(s: dict) -> str:
    run = s["run"]
    env = run.get("env") or {}
    bad = failed(s)
    compared = (s.get("night") or {}).get("compared", 1)
    head = ("❌ nothing compared" if (s.get("night") or {}).get("nothing_compared") else
            "❌ vanished series" if bad and (s.get("night") or {}).get("vanished") and not (
                s["new_regressions"] or s["new_failures"] or s.get("failing_against_previous")) else
            "❌ new regressions or failures" if bad else "✅ no new regressions" if compared or s["alerting"]
            else "ℹ️ nothing compared yet (no new failures)")
    lines = [f"## KernelWatch nightly: {head}", "",
             f"- run {md_code(run['id'], table=False)} ({md_text(run.get('tier'))}), "
             f"{md_text(env.get('gpu_name') or 'CPU ' + str(env.get('cpu')))}, "
             f"commit {md_text((run.get('git') or {}).get('commit') or '?')}, started {md_text(run.get('started_at'))}",
             "- results: " + ", ".join(f"{n} {k}" for k, n in sorted(s["counts"].items())),
             f"- change points: {len(s['alerting'])} alerting ({len(s['new_regressions'])} new regressions), "
             f"{len(s['acknowledged'])} acknowledged"
             + (f", {len(s['late'])} found late (listed once, not failing)" if s.get("late") else "")
             + "; " + detector_promise(),
             "- " + _against(s.get("night")), *_time_lines(s.get("time")), ""]
    night = s.get("night") or {}
    if night.get("vanished"):
        v = night["vanished"]
        lines[-1:-1] = [f"- **{len(v)} series of the previous night vanished** (they block): "
                        f"{md_text(', '.join(v[:10]), 800)}" + (f" and {len(v) - 10} more" if len(v) > 10 else "")
                        + (f"; {md_text(night['unfinished'])}" if night.get("unfinished") else "")]
    if night.get("regressed"):
        lines += ["### Regressed against the previous night (the gate's verdict)", "",
                  f"Run {md_text(_when(run.get('started_at'), (run.get('git') or {}).get('commit')))} against "
                  f"{md_text(night['baseline_when'])} ({md_code(night['baseline_run'], table=False)}). "
                  "A quality fraction or count fails the night unless muted; a timing waits for the detector: "
                  + md_text(detector_promise()) + ".", "",
                  "| series | change | fails the night | why |", "|---|---|---|---|"]
        lines += [f"| {md_code(r['series'])} | {'—' if r['change'] is None else format(r['change'], '+.1%')} | "
                  f"{md_text(r['fails_the_night'])} | {md_text(r['why'], 160)} |" for r in night["regressed"]] + [""]
    if s["alerting"]:
        lines += ["### Alerting change points (worst first)", "",
                  "Each change: the first run at its new level (date · commit) against the level before it.", "",
                  "| id | series | first run | when | before | after | change | kind | new | muted | noisy series |",
                  "|---|---|---|---|---|---|---|---|---|---|---|"]
        # a change in a series too noisy for 5% steps (any metric of the same benchmark) says so
        noisy = {d["series"].rsplit("/", 1)[0]: d for d in s.get("too_noisy", [])}
        for c in sorted(s["alerting"], key=lambda c: (c.kind != "regression", -abs(c.rel_change))):
            n = noisy.get(c.key.label().rsplit("/", 1)[0])
            when = _when(*s.get("runs", {}).get(c.run_id, (c.started_at, None)))
            lines.append(f"| {c.id} | {md_code(c.key.label())} | {md_code(c.run_id)} | {md_text(when)} | "
                         f"{_fmt(c.before)} | {_fmt(c.after)} | "
                         f"{c.rel_change:+.1%} | {c.kind} | {('late' if c.late else 'yes') if c.new else ''} | "
                         f"{md_text(c.muted['who'] + ': ' + c.muted['why']) if c.muted else ''} | "
                         f"{'finds ' + format(n['resolvable_step'], '.0%') + ' steps' if n else ''} |")
        lines += ["", "Acknowledge an intended change: `kwatch ack ID --who NAME --why REASON`.", ""]
    if s.get("late"):
        lines += ["### Found late (listed once)", "",
                  "Raised on an earlier night that detection did not run on; listed this once, never as a new "
                  "regression.", ""]
        lines += [f"- {md_code(c.key.label(), table=False)} {c.rel_change:+.1%} from {md_code(c.run_id, table=False)} "
                  f"(its alert night: {md_code(c.alerted_run_id, table=False)})" for c in s["late"]] + [""]
    if s["failures"]:
        lines += ["### Failures", "", "| series | status | new | message |", "|---|---|---|---|"]
        for f in s["failures"]:
            lines.append(f"| {md_code(f['series'])} | {f['status']} | {'yes' if f['new'] else ''} | "
                         f"{md_text(f['error'] or '', 160)} |")
        lines.append("")
    if s.get("expected"):
        lines += ["### Expected failures and probe points (measurements, not failing)", "",
                  "| technique/impl | series | why |", "|---|---|---|"]
        lines += [f"| {md_code(e['technique'] + '/' + e['impl'])} | {md_text(e['series'])} | {md_text(e['why'], 160)} |"
                  for e in s["expected"]] + [""]
    if s.get("new_histories"):
        lines += ["### New histories: detection starts again", "",
                  "These series changed identity, so their earlier nights are a different series: the "
                  f"detector alerts on them again once they have {_DET.min_short} nights of their own and a new "
                  f"level has held {_DET.confirm} nights.", "",
                  "| what changed | change | series | nights so far | nights before an alert is possible |",
                  "|---|---|---|---|---|"]
        lines += [f"| {g['what']} | {md_code(g['change'])} | {g['series']} | {g['nights']} | {g['needed']} |"
                  for g in s["new_histories"]] + [""]
    if s.get("too_noisy"):
        lines += ["### Too noisy to catch a 5% change", "",
                  "Their last nights scatter so much that only a larger step can be found within 2 nights; "
                  "measure them more quietly (more repetitions, CUDA graphs, a steady clock) before trusting "
                  "a quiet report for them. The detector alerts on them only for a change beyond their own "
                  f"scatter, and within {_DET.noisy_ref} nights of their last change only once the new level "
                  f"has held {nights_needed(_DET.noisy_ref - 1, _DET)}-{nights_needed(_DET.min_ref, _DET)} nights.", "",
                  "| series | nights | night CV (sd / mean) | smallest step found within 2 nights |", "|---|---|---|---|"]
        lines += [f"| {md_code(d['series'])} | {d['nights']} | {d['night_cv']:.1%} | {d['resolvable_step']:.0%} |"
                  for d in s["too_noisy"][:30]]
        more = len(s["too_noisy"]) - 30
        lines += ([f"| and {more} more (nightly.json lists all) | | | |"] if more > 0 else []) + [""]
    if s["acknowledged"]:
        lines += ["### Acknowledged (re-baselined)", ""]
        lines += [f"- {md_code(c.key.label(), table=False)} {c.rel_change:+.1%} at {md_code(c.run_id, table=False)}: "
                  f"{md_text(c.acknowledged['who'])} — {md_text(c.acknowledged['why'])}" for c in s["acknowledged"]] + [""]
    return "\n".join(lines)


def _figure(key: SeriesKey, points: list[Point], marks: list[Detected]):
    import plotly.graph_objects as go  # heavy (about 1 s): only the HTML page needs it, not every kwatch command

    ok = [p for p in points if p.status == "ok" and p.value is not None]
    fig = go.Figure()
    q1 = [p.stats.get("q1") for p in ok]
    q3 = [p.stats.get("q3") for p in ok]
    err = None
    if key.metric == "latency_ms" and all(v is not None for v in q1 + q3):
        err = dict(type="data", symmetric=False, array=[b - p.value for b, p in zip(q3, ok)],
                   arrayminus=[p.value - a for a, p in zip(q1, ok)], thickness=1)
    fig.add_trace(go.Scatter(x=[p.started_at for p in ok], y=[p.value for p in ok], mode="lines+markers",
                             name=plotly_text(key.metric), error_y=err,
                             hovertext=[plotly_text(p.run_id[:12]) for p in ok]))
    for c in marks:
        colour = "crimson" if c.kind == "regression" else ("seagreen" if c.kind == "improvement" else "grey")
        fig.add_vline(x=c.started_at.timestamp() * 1000, line_dash="dash", line_color=colour)
        fig.add_annotation(x=c.started_at, y=c.after, text=f"{c.rel_change:+.1%}{' (ack)' if c.acknowledged else ''}",
                           showarrow=True, arrowhead=1)
    fig.update_layout(title=plotly_text(key.label()), height=320, margin=dict(l=40, r=20, t=40, b=30),
                      yaxis_title=plotly_text(f"{key.metric} (median, IQR bars)" if err else key.metric))
    return fig


def to_html(s: dict, markdown: str, series: dict[SeriesKey, list[Point]], changes: list[Detected],
            max_plots: int = 40) -> str:
    """One self-contained HTML page: the summary and a history plot per series with a change point."""
    from plotly.offline import get_plotlyjs  # heavy, as in _figure

    by_key: dict[SeriesKey, list[Detected]] = {}
    for c in changes:
        by_key.setdefault(c.key, []).append(c)
    keys = sorted(by_key, key=lambda k: (min(c.kind != "regression" for c in by_key[k]),
                                         -max(abs(c.rel_change) for c in by_key[k])))[:max_plots]
    if not keys:  # nothing changed: show the latency series of this run
        keys = [k for k in sorted(series) if k.metric == "latency_ms"][:12]
    divs = [_figure(k, series.get(k, []), by_key.get(k, [])).to_html(full_html=False, include_plotlyjs=False)
            for k in keys]
    md = html.escape(markdown)
    return ("<!doctype html><html><head><meta charset='utf-8'><title>KernelWatch nightly</title>"
            f"<script type='text/javascript'>{get_plotlyjs()}</script>"
            "<style>body{font-family:system-ui,sans-serif;margin:2em;max-width:1100px}"
            "pre{white-space:pre-wrap;background:#f6f8fa;padding:1em}</style></head><body>"
            f"<h1>KernelWatch nightly — {html.escape(str(s['run'].get('started_at')))}</h1>"
            f"<pre>{md}</pre><h2>History</h2>" + "\n".join(divs) +
            f"<p>generated {datetime.now().isoformat(timespec='seconds')}</p></body></html>")
