"""Baseline series the candidate does not have: vanished (blocks the gate) or removed on purpose (listed).

A series leaves on purpose when its technique, implementation or case is gone from the spec
(suite.registry, as checked out), when it is outside the candidate run's tier or selection, or when the
user names it with `--allow-removed TECH[/IMPL[/CASE]]`. Every other baseline series missing from the
candidate vanished: a crashed job, a case the code stopped producing, a run stopped before its last jobs (no
finish time: `unfinished` says so on the first screen); the gate fails on it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Optional

from db.series import SeriesKey


@dataclass
class Missing:
    """One baseline series absent from the candidate, and why it is not blocking ("" when it blocks)."""

    key: SeriesKey
    why_not_blocking: str = ""

    @property
    def blocking(self) -> bool:
        return not self.why_not_blocking


def _spec_reason(key: SeriesKey, tier: str) -> str:
    """Why the spec no longer produces this series in `tier` ("" when it still does)."""
    from suite.registry import techniques  # the spec as checked out

    tech = techniques().get(key.technique)
    if tech is None:
        return f"technique {key.technique} gone from the spec"
    impl = next((i for i in tech.impls if i.name == key.impl), None)
    if impl is None:
        return f"implementation {key.impl} gone from the spec"
    declared = {c.id: c for c in tech.cases}
    case = declared.get(key.case_id)
    if case is None:
        if key.case_id.endswith("/grid"):
            return ""  # a pooled grid (db.verdict.prepare) of declared cases: its implementation is still there
        return ("a probe point (the probe's own case id), not a declared case" if tech.probe
                else f"case {key.case_id} gone from the spec")
    if tier and tier in ("smoke", "smoke_full", "nightly", "full"):
        if impl not in tech.impls_for(tier):
            return f"implementation {key.impl} no longer runs in the {tier} tier"
        if case not in tech.cases_for(tier):
            return f"case {key.case_id} no longer runs in the {tier} tier"
    return ""


def _allowed(key: SeriesKey, allow: Iterable[str]) -> Optional[str]:
    parts = (key.technique, key.impl, key.case_id)
    for a in allow:
        want = [p for p in a.strip().strip("/").split("/", 2) if p]
        if want and tuple(want) == parts[:len(want)]:
            return a
    return None


def classify(dropped: list[SeriesKey], candidate_run: dict, allow: Iterable[str] = ()) -> list[Missing]:
    """Each dropped baseline series with why it is not blocking ("" where it vanished)."""
    allow = list(allow)
    cfg = candidate_run.get("config") or {}
    sel = {k: set(cfg.get(k) or ()) for k in ("techniques", "impls", "cases")}
    tier = candidate_run.get("tier") or ""
    out = []
    for k in dropped:
        a = _allowed(k, allow)
        if a:
            why = f"removed on purpose (--allow-removed {a})"
        elif (sel["techniques"] and k.technique not in sel["techniques"]) or (sel["impls"] and k.impl not in sel["impls"]) \
                or (sel["cases"] and k.case_id not in sel["cases"]):
            why = "not selected by the candidate run"
        else:
            why = _spec_reason(k, tier)
        out.append(Missing(k, why))
    return out


def unfinished(run: dict) -> str:
    """Why the candidate's missing series may never have run ("" for a run that recorded its finish): a run
    stopped part-way (its time limit, a signal) keeps the jobs that finished and no finish time."""
    if run.get("finished_at") or not run.get("started_at"):
        return ""
    return (f"the candidate run did not finish (started {run['started_at']}, no finish time: stopped or killed), "
            "so these series never ran; gate a run that finished, or name what it skipped with --allow-removed")


def summary_line(missing: list[Missing], why: str = "") -> str:
    """'N series vanished (T techniques/impls: a, b, ...); why' for the console; '' when none vanished. why:
    the candidate run's `unfinished` text, else the line asks whether they were removed on purpose."""
    vanished = [m.key for m in missing if m.blocking]
    if not vanished:
        return ""
    groups: dict[str, int] = {}
    for k in vanished:
        groups[f"{k.technique}/{k.impl}"] = groups.get(f"{k.technique}/{k.impl}", 0) + 1
    top = ", ".join(f"{g} ({n})" for g, n in sorted(groups.items(), key=lambda x: -x[1])[:6])
    more = f" and {len(groups) - 6} more" if len(groups) > 6 else ""
    why = why or "removed on purpose? --allow-removed TECH[/IMPL[/CASE]]"
    return f"{len(vanished)} baseline series vanished from the candidate ({top}{more}); {why}"
