"""Alerts: the change points the online detector stored (`kwatch detect`, `kwatch nightly`), each with
its run, the run before it in its series, and its state, read-only for the dashboard.

States, as `kwatch detect` lists them: acknowledged (an acknowledgement of that change point, or one
without a change point on the series from that run on), muted (a mute in force matches the series),
found late (raised on a night before the newest one when it was stored), else new.
"""
from __future__ import annotations

from datetime import datetime, timezone
from typing import Iterable, Optional

import pandas as pd
from sqlalchemy import select, tuple_

from db.actions import ack_covers
from db.models import Benchmark, Environment, Result, Run
from db.queries import _ci_table, _frame, _label, tables

STATES = ["new", "found late", "muted", "acknowledged"]
SERIES = ["technique", "impl", "case_id", "metric", "hardware_key", "software_key", "protocol"]
ALERT_COLUMNS = ["id", *SERIES, "run_id", "run_started_at", "detected_at", "method", "before_value",
                 "after_value", "rel_change", "kind", "late", "git_commit", "tier", "hardware", "software"]
ACK_COLUMNS = ["ack_id", *SERIES, "from_run_id", "from_started_at", "change_point_id", "who", "why", "created_at"]
MUTE_COLUMNS = ["mute_id", "technique", "impl", "case_id", "metric", "hardware_key", "who", "why", "until",
                "created_at"]


def utc(t) -> Optional[pd.Timestamp]:
    """A stored time as an aware UTC Timestamp (SQLite returns naive UTC), None for none."""
    if t is None or (not isinstance(t, (str, datetime, pd.Timestamp))) or pd.isna(t):
        return None
    ts = pd.Timestamp(t)
    return ts.tz_localize("UTC") if ts.tzinfo is None else ts.tz_convert("UTC")


def change_points(url: Optional[str]) -> pd.DataFrame:
    """Every stored change point with its run's commit, tier and hardware/software labels: ALERT_COLUMNS."""
    t = _ci_table(url, "ci_change_points")
    if t is None:
        return pd.DataFrame(columns=ALERT_COLUMNS)
    stmt = (select(t.c.id, *[t.c[c] for c in SERIES], t.c.run_id, t.c.run_started_at, t.c.detected_at, t.c.method,
                   t.c.before_value, t.c.after_value, t.c.rel_change, t.c.kind, t.c.details, Run.git_commit,
                   Run.tier, Environment.gpu_name, Environment.cpu, Environment.torch, Environment.triton,
                   Environment.cuda, Environment.driver)
            .join(Run, Run.id == t.c.run_id).join(Environment, Environment.id == Run.environment_id)
            .order_by(t.c.run_started_at.desc(), t.c.id.desc()))
    cols = ALERT_COLUMNS[:ALERT_COLUMNS.index("late")] + ["details", "git_commit", "tier", "gpu_name", "cpu", "torch", "triton", "cuda",
                                 "driver"]
    df = _label(_frame(url, stmt, cols))
    df["late"] = [bool((d or {}).get("late")) for d in df["details"]]
    return df[ALERT_COLUMNS]


def acknowledgements(url: Optional[str]) -> pd.DataFrame:
    """Every acknowledgement: ACK_COLUMNS."""
    t = _ci_table(url, "ci_acknowledgements")
    if t is None:
        return pd.DataFrame(columns=ACK_COLUMNS)
    stmt = select(t.c.id, *[t.c[c] for c in ACK_COLUMNS[1:]])
    return _frame(url, stmt, ACK_COLUMNS)


def mutes(url: Optional[str]) -> pd.DataFrame:
    """Every mute, expired ones too: MUTE_COLUMNS."""
    t = _ci_table(url, "ci_mutes")
    if t is None:
        return pd.DataFrame(columns=MUTE_COLUMNS)
    return _frame(url, select(t.c.id, *[t.c[c] for c in MUTE_COLUMNS[1:]]), MUTE_COLUMNS)


def mute_matches(mute, technique: str, impl: str, case_id: str, metric: str, hardware_key: str) -> bool:
    """Does a mute (mapping; None or "" fields match anything) cover this series?"""
    if mute["technique"] != technique:
        return False
    want = {"impl": impl, "case_id": case_id, "metric": metric, "hardware_key": hardware_key}
    return all(mute[f] is None or (not isinstance(mute[f], str) and pd.isna(mute[f])) or mute[f] in ("", v)
               for f, v in want.items())


def with_state(cps: pd.DataFrame, acks: pd.DataFrame, mute_rows: pd.DataFrame,
               now: Optional[datetime] = None) -> pd.DataFrame:
    """cps with `state` (STATES) and `state_detail` (who, why, until), as `kwatch detect` judges them."""
    now = utc(now or datetime.now(timezone.utc))
    live = [m for m in mute_rows.to_dict("records") if utc(m["until"]) is None or utc(m["until"]) > now]
    by_series: dict[tuple, list[dict]] = {}
    for a in acks.to_dict("records"):
        by_series.setdefault(tuple(a[c] or "" for c in SERIES), []).append(a)
    states, details = [], []
    for r in cps.to_dict("records"):
        ack = next((a for a in by_series.get(tuple(r[c] or "" for c in SERIES), [])
                    if ack_covers(utc(a["from_started_at"]),
                                  None if pd.isna(a["change_point_id"]) else a["change_point_id"],
                                  utc(r["run_started_at"]), r["id"])), None)
        mute = next((m for m in live if mute_matches(m, r["technique"], r["impl"], r["case_id"], r["metric"],
                                                     r["hardware_key"])), None)
        if ack is not None:
            states.append("acknowledged")
            details.append(f"by {ack['who']}: {ack['why']}")
        elif mute is not None:
            until = utc(mute["until"])
            states.append("muted")
            details.append(f"by {mute['who']} until {until:%Y-%m-%d %H:%M} UTC: {mute['why']}" if until is not None
                           else f"by {mute['who']}: {mute['why']}")
        else:
            states.append("found late" if r["late"] else "new")
            details.append("")
    return cps.assign(state=states, state_detail=details)


def runs_before(url: Optional[str], cps: pd.DataFrame) -> list[Optional[str]]:
    """Per change point (rows with SERIES, run_started_at, tier): the run id of its series' result just
    before the change's run, in the same tier; None where there is none."""
    if cps.empty or "results" not in tables(url):
        return [None] * len(cps)
    subjects = sorted({(r.technique, r.impl, r.case_id) for r in cps.itertuples()})
    stmt = (select(Benchmark.technique, Benchmark.impl, Benchmark.case_id, Result.metric, Environment.hardware_key,
                   Environment.software_key, Result.protocol, Run.id, Run.started_at, Run.tier)
            .join(Benchmark, Benchmark.id == Result.benchmark_id).join(Run, Run.id == Result.run_id)
            .join(Environment, Environment.id == Run.environment_id)
            .where(tuple_(Benchmark.technique, Benchmark.impl, Benchmark.case_id).in_(subjects),
                   Result.metric.in_(sorted(set(cps["metric"]))), Result.status == "ok"))
    pts = _frame(url, stmt, [*SERIES, "run_id", "started_at", "tier"])
    pts["protocol"] = pts["protocol"].fillna("")
    pts["started_at"] = [utc(t) for t in pts["started_at"]]
    groups = {k: g.sort_values("started_at") for k, g in pts.groupby([*SERIES, "tier"], sort=False)}
    out: list[Optional[str]] = []
    for r in cps.to_dict("records"):
        g = groups.get(tuple((r[c] or "") if c == "protocol" else r[c] for c in SERIES) + (r["tier"],))
        before = g[g["started_at"] < utc(r["run_started_at"])] if g is not None else None
        out.append(before["run_id"].iloc[-1] if before is not None and len(before) else None)
    return out


def open_alerts(alerts: pd.DataFrame, states: Iterable[str]) -> pd.DataFrame:
    """The rows of `alerts` (with_state) whose state is one of `states`, newest change first."""
    return alerts[alerts["state"].isin(list(states))].sort_values(["run_started_at", "id"], ascending=False)
