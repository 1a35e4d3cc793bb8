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


def to_markdown(result) -> str:
    """The PR comment: verdict, counts, blocking series, shape-space groups, re-measures, flags, mutes, all."""
    th = result.thresholds
    counts = result.counts()
    blocking = [v for v in result.ordered() if v.blocking]
    shares = ceiling_shares(result)
    head = "❌ **FAIL**" if result.failed else "✅ **PASS**"
    lines = [f"## KernelWatch gate: {head}", "",
             f"- baseline: {md_text(result.baseline.describe())}",
             f"- candidate: {md_text(result.candidate.describe())}",
             *(f"- {side} {md_text(ceilings_line(d.run.get('ceilings') or ceilings_from_rows(d.rows)))}"
               for side, d in (("baseline", result.baseline), ("candidate", result.candidate))),
             "- " + ", ".join(f"{ICON.get(s, '')} {n} {s}" for s, n in sorted(counts.items(), key=lambda x: SEVERITY.get(x[0], 99))),
             "- rules (db/verdict): " + rules_line(th),
             f"- re-measuring: {result.remeasure_note}", ""]
    if blocking:
        lines += [f"### Blocking ({len(blocking)})", "", HEADER] + [_row(v, shares) for v in blocking] + [""]
    groups = [g for g in shape_groups(result.verdicts) if g["bad_cases"]]
    if groups:
        lines += ["### Where in the shape space", ""]
        for g in groups:
            where = f" — {md_text(g['where'])}" if g["where"] else ""
            ok = [c for c, s in g["by_case"].items() if c not in g["bad_cases"]]
            lines.append(f"- {md_code(g['technique'] + '/' + g['impl'], table=False)} "
                         f"({md_text(', '.join(g['bad_metrics']))}): bad in {len(g['bad_cases'])} of "
                         f"{g['cases']} cases ({md_text(', '.join(g['bad_cases']), 600)})"
                         + (f"; fine in {md_text(', '.join(ok), 600)}" if ok else "") + where)
        lines.append("")
    remeasured = [v for v in result.verdicts if v.remeasured]
    if remeasured:
        lines += ["### Re-measured", ""] + [f"- {md_code(v.key.label(), table=False)}: {v.status}"
                                            for v in remeasured] + [""]
    flagged = [v for v in result.verdicts if v.flags]
    if flagged:
        lines += ["### Flags", ""] + [f"- {md_code(v.key.label(), table=False)}: {md_text('; '.join(v.flags))}"
                                      for v in flagged] + [""]
    muted = [v for v in result.verdicts if v.muted]
    if muted:
        lines += ["### Muted (listed, not counted)", "", "| series | would be | who | why | until |", "|---|---|---|---|---|"]
        lines += [f"| {md_code(v.key.label())} | {v.status} | {md_text(v.muted['who'])} | {md_text(v.muted['why'])} | "
                  f"{md_text(v.muted['until'] or '—')} |" for v in muted] + [""]
    if result.dropped:
        lines += ["### In the baseline but not in the candidate", ""]
        lines += [f"- {md_code(k.label(), table=False)}" for k in result.dropped] + [""]
    lines += ["<details><summary>All series, worst first</summary>", "", HEADER]
    lines += [_row(v, shares) for v in result.ordered()] + ["", "</details>", ""]
    return "\n".join(lines)


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
            "dropped": [k.as_dict() for k in result.dropped]}
