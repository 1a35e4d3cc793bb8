"""Gate reports: Markdown for a PR comment (worst first, figures with uncertainty) and JSON."""
from __future__ import annotations

from collections import defaultdict

from ci.gate_compare import SEVERITY, SeriesVerdict
from db.escape import md_code, md_text
from db.verdict.spread import TAIL as SPREAD_TAIL
from suite.ceilings import ceilings_from_rows, ceilings_line, share_text

ICON = {"regressed": "🔴", "failed correctness": "❌", "errored": "💥", "improved": "🟢", "stable": "⚪",
        "expected failure": "🔹", "insufficient data": "❔", "missing baseline": "➖"}


def _num(x, unit: str = "") -> str:
    if x is None:
        return "—"
    s = f"{x:.4g}" if abs(x) >= 1e-3 or x == 0 else f"{x:.3e}"
    return f"{s} {unit}".strip() if unit not in ("1", "") else s


def _change(v: SeriesVerdict) -> str:
    if v.change is None:
        return "—"
    s = f"{v.change:+.1%}"
    if v.ci:
        s += f" [{v.ci[0]:+.1%}, {v.ci[1]:+.1%}]"
    return s


def _spread(v: SeriesVerdict, side: str) -> str:
    value = v.baseline_value if side == "b" else v.candidate_value
    k = v.k_baseline if side == "b" else v.k_candidate
    n = v.n_baseline if side == "b" else v.n_candidate
    return _num(value, v.unit) + (f" ({k}/{n})" if k is not None else "")


def _bad(v: SeriesVerdict) -> bool:
    return (v.status == "regressed" and v.gated) or v.status in ("failed correctness", "errored")


def shape_groups(verdicts: list[SeriesVerdict]) -> list[dict]:
    """Per technique + impl: each case's worst status over its metrics, the bad cases, and a case
    parameter range that separates bad from fine cases (a regression confined to part of the shape space)."""
    groups: dict[tuple, dict[str, list[SeriesVerdict]]] = defaultdict(lambda: defaultdict(list))
    for v in verdicts:
        groups[(v.key.technique, v.key.impl)][v.key.case_id].append(v)
    out = []
    for (tech, impl), cases in sorted(groups.items()):
        worst = {c: min(vs, key=lambda v: SEVERITY.get(v.status, 99)) for c, vs in sorted(cases.items())}
        bad = [v for v in worst.values() if _bad(v)]
        good = [v for v in worst.values() if v.status in ("stable", "improved")]
        entry = {"technique": tech, "impl": impl, "cases": len(worst),
                 "by_case": {c: v.status for c, v in worst.items()},
                 "bad_cases": [v.key.case_id for v in bad],
                 "bad_metrics": sorted({v.key.metric for vs in cases.values() for v in vs if _bad(v)}),
                 "where": _separating_param(bad, good) if bad and good else None}
        out.append(entry)
    return out


def _separating_param(bad: list[SeriesVerdict], good: list[SeriesVerdict]) -> str | None:
    """A numeric case parameter whose values split bad from good cases by a threshold, if any."""
    names = set.intersection(*(set(v.params) for v in bad + good)) if bad and good else set()
    for p in sorted(names):
        try:
            b = [float(v.params[p]) for v in bad]
            g = [float(v.params[p]) for v in good]
        except (TypeError, ValueError):
            continue
        if min(b) > max(g):
            return f"only where {p} >= {min(b):g} (fine up to {max(g):g})"
        if max(b) < min(g):
            return f"only where {p} <= {max(b):g} (fine from {min(g):g})"
    return None


def ceiling_shares(result) -> dict[tuple, tuple[str, str]]:
    """(technique, impl, case, metric) -> (baseline, candidate) share of the run's ceiling ("-": none)."""
    side = lambda rows: {(r["technique"], r["impl"], r["case"], r["metric"]): share_text(r.get("stats"))
                         for r in rows}
    base, cand = side(result.baseline.rows), side(result.candidate.rows)
    return {k: (base.get(k, "-"), cand.get(k, "-")) for k in base.keys() | cand.keys()}


def _share(v: SeriesVerdict, shares: dict) -> str:
    k = v.key
    b, c = shares.get((k.technique, k.impl, k.case_id, k.metric), ("-", "-"))
    return c if b in ("-", c) else f"{b} → {c}"


def _row(v: SeriesVerdict, shares: dict | None = None) -> str:
    tags = []
    if v.muted:
        tags.append("muted")
    if v.remeasured:
        tags.append("re-measured")
    if v.new_failure:
        tags.append("new")
    tag = f" ({', '.join(tags)})" if tags else ""
    p = "—" if v.p_value is None else (f"{v.p_value:.2g}" if v.p_value > 0 else "<1e-300")
    return (f"| {ICON.get(v.status, '') if v.gated else '⚪'} {v.label}{tag} | "
            f"{md_code(f'{v.key.technique}/{v.key.impl}')} | {md_code(v.key.case_id)} | {md_text(v.key.metric)} | "
            f"{_spread(v, 'b')} | {_spread(v, 'c')} | {md_text(_share(v, shares or {}))} | {_change(v)} | {p} | {v.n_baseline}/{v.n_candidate} | "
            f"{md_text(v.reason, 180)} |")


HEADER = ("| status | technique/impl | case | metric | baseline | candidate | share of ceiling | change [95% CI] | p "
          "| n b/c | why |\n|---|---|---|---|---|---|---|---|---|---|---|")


def rules_line(th) -> str:
    """The verdict's rules in one sentence, with the thresholds in force."""
    host = ("host-timer (CPU) timings gate too (--gate-host-timings)" if th.gate_host_timings else
            "host-timer (CPU) timings are shown, never blocking")
    return (f"timings and throughputs: two-sided Mann-Whitney U on raw samples, p < {th.alpha}, and a median change "
            f"of at least {th.min_effect:.0%} ({th.host_min_effect:.0%} for host timers; {host}), shown with a 95% "
            f"CI of the median ratio that carries the run-to-run spread: the protocol's, or the series' own where "
            f"runs of the same code showed it wider (at 1/{1 / SPREAD_TAIL:.0f}; learned from "
            f"{th.spread_table().source}). Errors must stay within the stored tolerance or bound. Quality "
            f"fractions (recall, needle hits, *_frac) are k of n: Fisher's exact test p < {th.alpha} and an absolute "
            f"change of at least {th.quality_min_effect:g}, on n/phi trials where same-code runs scatter phi times "
            f"the binomial variance; needle grids pooled per selector and context. Expected "
            "failures and probe points are listed, never blocking. Regressions are never netted against improvements.")


COMMENT_LIMIT = 65_536  # GitHub's limit on a comment body, in characters


class Budget:
    """Markdown lines under a character limit: whole rows only, a section's closing lines reserved, and a
    line saying how many rows are left to the artifact wherever a section is cut."""

    def __init__(self, limit: int | None, artifact: str) -> None:
        self.limit, self.artifact, self.lines, self.used, self.cut = limit, artifact, [], 0, 0

    def fits(self, text: str, reserve: int = 0) -> bool:
        return self.limit is None or self.used + len(text) + 1 + reserve <= self.limit

    def add(self, text: str) -> bool:
        if not self.fits(text):
            return False
        self.lines.append(text)
        self.used += len(text) + 1
        return True

    def section(self, head: list[str], rows: list[str], tail: list[str] = (), what: str = "rows") -> None:
        """head, as many rows as fit, a 'N more' line where cut, then tail (always written if head was)."""
        more = lambda n: f"\n_{n} more {what} in {self.artifact}_"  # noqa: E731
        reserve = sum(len(t) + 1 for t in tail) + len(more(len(rows))) + 1
        if not rows or not self.fits("\n".join(head), reserve + len(rows[0]) + 1):
            if rows:
                self.cut += len(rows)
            return
        for h in head:
            self.add(h)
        left = len(rows)
        for r in rows:
            if not self.fits(r, reserve):
                break
            self.add(r)
            left -= 1
        if left:
            self.cut += left
            self.add(more(left).strip())
        for t in tail:
            self.used += len(t) + 1
            self.lines.append(t)


def _words(n: int, what: str) -> str:
    return f"{n} {what}" + ("" if n == 1 else "s" if not what.endswith("series") else "")


def first_screen(result) -> list[str]:
    """The verdict, why, and the counts in series: what a reviewer reads before anything else."""
    counts = result.counts()
    blocking = [v for v in result.verdicts if v.blocking]
    if result.nothing_compared:
        return ["## KernelWatch gate: ❌ **FAIL — nothing compared**", "", f"**{md_text(result.nothing_compared)}**", ""]
    head = "❌ **FAIL**" if result.failed else "✅ **PASS**"
    out = [f"## KernelWatch gate: {head}", ""]
    why = []
    if blocking:
        why.append(f"**{_words(len(blocking), 'blocking series')}**")
    vanished = result.vanished
    if vanished:
        why.append(f"**{_words(len(vanished), 'series')} of the baseline vanished** from the candidate"
                   + (f": {md_text(result.unfinished)}" if result.unfinished
                      else " (removed on purpose? `--allow-removed TECH[/IMPL[/CASE]]`)"))
    if why:
        out += ["- " + "; ".join(why)]
    compared = sum(counts.get(s, 0) for s in ("regressed", "improved", "stable"))
    parts = [f"{n} {s}" for s, n in sorted(counts.items(), key=lambda x: SEVERITY.get(x[0], 99))]
    out.append(f"- {_words(compared, 'series')} compared: " + ", ".join(parts))
    amb = [v for v in result.verdicts if v.ambiguous]
    if amb:
        reasons: dict[str, int] = {}
        for v in amb:
            r = ("the SM clock fell" if "SM clock fell" in v.reason else
                 "CI straddles the 5% effect" if v.reason.startswith("ambiguous") else v.reason.split(":")[0][:60])
            reasons[r] = reasons.get(r, 0) + 1
        out.append(f"- {_words(len(amb), 'ambiguous series')} (not blocking; re-measure with `--remeasure`): "
                   + ", ".join(f"{n} {md_text(r)}" for r, n in sorted(reasons.items(), key=lambda x: -x[1])))
    if result.other_host:
        out.append(f"- baseline and candidate ran on different machines ({md_text(result.other_host)}): a timing "
                   "change of unchanged code is the machine's, shown as ambiguous; re-measure on one host (`kwatch gate --ab`)")
    elif result.host_unknown and any(v.blocking and any(f.startswith(result.host_unknown) for f in v.flags)
                                     for v in result.verdicts):  # the caveat judge put on unchanged code
        out.append(f"- {md_text(result.host_unknown)}: a blocking series of unchanged code may be the host's; "
                   "re-measure on one host (`kwatch gate --ab`)")
    removed = [m for m in result.missing if not m.blocking]
    if removed:
        out.append(f"- {_words(len(removed), 'series')} of the baseline removed on purpose (listed in the report)")
    return out + [""]


def _caveats(v: SeriesVerdict) -> str:
    return f" ⚠️ {md_text('; '.join(v.flags), 400)}" if v.flags else ""


def to_markdown(result, limit: int | None = None, artifact: str = "the full report") -> str:
    """The gate report: the first screen (verdict, counts in series, ambiguous, vanished), blocking rows with
    their caveats, then the rest worst first. limit: a character budget (a PR comment: COMMENT_LIMIT less the
    poster's marker) that is never exceeded, cutting whole rows only and closing every <details>."""
    th = result.thresholds
    blocking = [v for v in result.ordered() if v.blocking]
    shares = ceiling_shares(result)
    b = Budget(limit, artifact)
    for line in first_screen(result):
        b.add(line)
    b.section([f"### Blocking ({_words(len(blocking), 'series')})", "", HEADER],
              [_row(v, shares) + _caveats(v) for v in blocking], [""], "blocking series")
    vanished = result.vanished
    b.section([f"### Vanished from the candidate ({_words(len(vanished), 'series')}, blocking)", ""],
              [f"- {md_code(m.key.label(), table=False)}" for m in vanished], [""], "vanished series")
    amb = [v for v in result.ordered() if v.ambiguous]
    b.section([f"### Ambiguous ({_words(len(amb), 'series')}, not blocking)", "", HEADER],
              [_row(v, shares) + _caveats(v) for v in amb], [""], "ambiguous series")
    for line in [f"- baseline: {md_text(result.baseline.describe())}",
                 f"- candidate: {md_text(result.candidate.describe())}",
                 *(f"- {side} {md_text(ceilings_line(d.run.get('ceilings') or ceilings_from_rows(d.rows)))}"
                   for side, d in (("baseline", result.baseline), ("candidate", result.candidate))),
                 "- rules (db/verdict): " + rules_line(th), f"- re-measuring: {result.remeasure_note}", ""]:
        b.add(line)
    groups = [g for g in shape_groups(result.verdicts) if g["bad_cases"]]
    b.section(["### Where in the shape space", ""],
              [f"- {md_code(g['technique'] + '/' + g['impl'], table=False)} ({md_text(', '.join(g['bad_metrics']))}): "
               f"bad in {len(g['bad_cases'])} of {g['cases']} cases ({md_text(', '.join(g['bad_cases']), 600)})"
               + (f" — {md_text(g['where'])}" if g["where"] else "") for g in groups], [""], "groups")
    odd = [(side, r) for side, d in (("baseline", result.baseline), ("candidate", result.candidate))
           for r in d.rows if (r.get("stats") or {}).get("impossible")]
    # a rate beyond the machine is a measuring fault, never a speed-up (runners/ceilings.py)
    b.section([f"### IMPOSSIBLE: rates beyond the machine ({len(odd)})", ""],
              [f"- {side} {md_code(r['technique'] + '/' + r['impl'] + '/' + r['case'], table=False)}: "
               f"{md_text(r['stats']['impossible'])}" for side, r in odd], [""], "rows")
    b.section(["### Re-measured", ""], [f"- {md_code(v.key.label(), table=False)}: {v.status}"
                                        for v in result.verdicts if v.remeasured], [""], "series")
    b.section(["### Flags", ""], [f"- {md_code(v.key.label(), table=False)}: {md_text('; '.join(v.flags))}"
                                  for v in result.ordered() if v.flags and not v.blocking and not v.ambiguous], [""], "series")
    b.section(["### Muted (listed, not counted)", "", "| series | would be | who | why | until |", "|---|---|---|---|---|"],
              [f"| {md_code(v.key.label())} | {v.status} | {md_text(v.muted['who'])} | {md_text(v.muted['why'])} | "
               f"{md_text(v.muted['until'] or '—')} |" for v in result.verdicts if v.muted], [""], "series")
    b.section(["### Removed on purpose (not blocking)", ""],
              [f"- {md_code(m.key.label(), table=False)}: {md_text(m.why_not_blocking)}"
               for m in result.missing if not m.blocking], [""], "series")
    b.section(["<details><summary>All series, worst first</summary>", "", HEADER],
              [_row(v, shares) for v in result.ordered()], ["", "</details>", ""], "series")
    return "\n".join(b.lines)


def to_json(result) -> dict:
    """Machine-readable report: verdict, counts, every series with figures, groups, flags."""
    return {"verdict": "fail" if result.failed else "pass", "exit_code": result.exit_code,
            "created_at": result.created_at,
            "baseline": {"ref": result.baseline.ref, "run_id": result.baseline.run_id, "origin": result.baseline.origin,
                         "hardware_key": result.baseline.hardware_key, "software_key": result.baseline.software_key},
            "candidate": {"ref": result.candidate.ref, "run_id": result.candidate.run_id,
                          "origin": result.candidate.origin, "hardware_key": result.candidate.hardware_key,
                          "software_key": result.candidate.software_key},
            "settings": {"test": "mann-whitney-u two-sided (normal approximation, tie-corrected)", "count_test": "fisher-exact (scipy)",
                         "alpha": result.thresholds.alpha,
                         "quality_min_effect": result.thresholds.quality_min_effect,
                         "gate_host_timings": result.thresholds.gate_host_timings,
                         "min_effect": result.thresholds.min_effect,
                         "host_min_effect": result.thresholds.host_min_effect, "ci": "95% distribution-free CI of the median ratio (Price & Bonett 2002)",
                         "suspicious_speedup": result.thresholds.suspicious_speedup,
                         "run_spreads": {"protocol_gpu": result.thresholds.run_cv_gpu,
                                         "protocol_placed": result.thresholds.run_cv_placed,
                                         "learned_from": result.thresholds.spread_table().source,
                                         "learned_tail": SPREAD_TAIL}},
            "counts": result.counts(), "remeasure": result.remeasure_note,
            "blocking": [v.key.label() for v in result.ordered() if v.blocking],
            "series": [v.as_dict() for v in result.ordered()],
            "ceiling_shares": {"/".join(k): {"baseline": b, "candidate": c}
                               for k, (b, c) in sorted(ceiling_shares(result).items()) if (b, c) != ("-", "-")},
            "groups": shape_groups(result.verdicts),
            "muted": [{"series": v.key.label(), "status": v.status, **v.muted} for v in result.verdicts if v.muted],
            "dropped": [k.as_dict() for k in result.dropped],
            "nothing_compared": result.nothing_compared,
            "vanished": [m.key.as_dict() for m in result.vanished],
            "removed": [{**m.key.as_dict(), "why": m.why_not_blocking} for m in result.missing if not m.blocking],
            "ambiguous": [v.key.label() for v in result.ordered() if v.ambiguous]}
