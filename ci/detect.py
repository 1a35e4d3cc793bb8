"""`kwatch detect` and `kwatch ack`: the online detector over nightly history, stored; acknowledgements re-baseline."""
from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.table import Table
from sqlalchemy import func, select

from ci.gate_mutes import matching_mute
from db.actions import ack_covers, acknowledge
from db.detector import DetectorSettings, online_changes
from db.engine import open_db
from db.models import Run
from db.models_ci import Acknowledgement, ChangePoint, Mute
from db.series import Point, SeriesKey, all_series
from db.verdict import metric_kind

console = Console(stderr=True)
METHOD = "online rank rule (db.detector): 3 nights beyond every reference night"


@dataclass
class Detected:
    id: int
    key: SeriesKey
    run_id: str
    started_at: datetime
    before: float
    after: float
    rel_change: float
    kind: str  # regression | improvement | neutral
    new: bool  # stored by this pass
    acknowledged: Optional[dict]
    muted: Optional[dict] = None  # listed, but does not fail the nightly job
    late: bool = False  # raised on a night before the newest one (detection had not run then)
    alerted_run_id: Optional[str] = None  # the night whose evaluation raised it

    @property
    def news(self) -> bool:
        """A regression found tonight, on time, neither acknowledged nor muted: what fails the job."""
        return self.new and not self.late and self.kind == "regression" and not self.acknowledged and not self.muted

    def as_dict(self) -> dict:
        return {"id": self.id, **self.key.as_dict(), "run_id": self.run_id, "started_at": self.started_at.isoformat(),
                "before": self.before, "after": self.after, "rel_change": self.rel_change, "kind": self.kind,
                "new": self.new, "late": self.late, "alerted_run_id": self.alerted_run_id,
                "acknowledged": self.acknowledged, "muted": self.muted}


def _aware(t: datetime) -> datetime:
    return t if t.tzinfo else t.replace(tzinfo=timezone.utc)


def _acks(session) -> dict[SeriesKey, list]:
    out: dict[SeriesKey, list] = {}
    for a in session.scalars(select(Acknowledgement).order_by(Acknowledgement.from_started_at)):
        k = SeriesKey(a.technique, a.impl, a.case_id, a.metric, a.hardware_key, a.software_key, a.protocol)
        out.setdefault(k, []).append(a)
    return out


def _kind(key: SeriesKey, direction: str, rel: float) -> str:
    if metric_kind(key.metric) != "timing" and abs(rel) < 1e-12:
        return "neutral"
    worse = rel > 0 if direction == "lower" else rel < 0
    return "regression" if worse else "improvement"


def _near(stored: dict, key: SeriesKey, pts: list[Point], index: int, rel: float):
    """A stored change of this series, of the same sign, located within one night of `index` (a change
    stored by an earlier detector, or before a late run was ingested between its nights)."""
    for j in (index, index - 1, index + 1):
        if 0 <= j < len(pts):
            row = stored.get((key, pts[j].run_id))
            if row is not None and (row.rel_change or 0) * rel > 0:
                return row
    return None


def detect(session, tier: str = "nightly", techniques: Optional[list[str]] = None,
           settings: DetectorSettings = DetectorSettings()) -> list[Detected]:
    """Replay each series night by night since its last acknowledgement (db.detector.online_changes);
    store each alert once. One raised on an earlier night than the newest is stored as late."""
    acks = _acks(session)
    now = datetime.now(timezone.utc)
    stored = {(SeriesKey(c.technique, c.impl, c.case_id, c.metric, c.hardware_key, c.software_key, c.protocol),
               c.run_id): c for c in session.scalars(select(ChangePoint))}
    found: list[Detected] = []
    for key, points in sorted(all_series(session, tier, techniques, with_samples=False).items()):
        ack_list = acks.get(key, [])
        since = _aware(ack_list[-1].from_started_at) if ack_list else None
        pts: list[Point] = [p for p in points if p.status == "ok" and p.value is not None and p.value > 0
                            and (since is None or _aware(p.started_at) >= since)]
        if len(pts) < settings.min_nights:
            continue
        for alert in online_changes([p.value for p in pts], settings):
            ch, p, at = alert.change, pts[alert.change.index], pts[alert.night]
            kind = _kind(key, p.direction, ch.rel_change)
            row = _near(stored, key, pts, ch.index, ch.rel_change)
            new = row is None
            late = new and alert.night < len(pts) - 1
            if new:
                row = ChangePoint(**key.as_dict(), run_id=p.run_id, run_started_at=p.started_at, method=METHOD,
                                  before_value=ch.before, after_value=ch.after, rel_change=ch.rel_change, kind=kind,
                                  detected_at=now, details={"settings": settings.__dict__, "points": len(pts),
                                                            "alerted_run_id": at.run_id, "late": late})
                session.add(row)
                session.flush()
                stored[(key, p.run_id)] = row
            details = row.details or {}
            found.append(Detected(row.id, key, row.run_id, _aware(row.run_started_at), row.before_value,
                                  row.after_value, row.rel_change, row.kind, new, None,
                                  late=bool(details.get("late")), alerted_run_id=details.get("alerted_run_id")))
    # Stored change points that an acknowledgement covers are listed as acknowledged, not alerting.
    for key, items in acks.items():
        for a in items:
            for (k, run_id), c in stored.items():
                if k == key and ack_covers(_aware(a.from_started_at), a.change_point_id,
                                           _aware(c.run_started_at), c.id):
                    found.append(Detected(c.id, k, run_id, c.run_started_at, c.before_value, c.after_value,
                                          c.rel_change, c.kind, False, {"who": a.who, "why": a.why, "ack_id": a.id}))
    mutes = session_mutes(session)
    for d in found:
        d.muted = matching_mute(d.key, mutes)
    return found


def session_mutes(session) -> list[dict]:
    """Mutes in force now, as dicts (ci.gate_mutes.matching_mute takes them)."""
    now = datetime.now(timezone.utc)
    return [{"technique": m.technique, "impl": m.impl, "case_id": m.case_id, "metric": m.metric,
             "hardware_key": m.hardware_key, "who": m.who, "why": m.why,
             "until": _aware(m.until).isoformat() if m.until else None}
            for m in session.scalars(select(Mute)) if m.until is None or _aware(m.until) > now]


def table(found: list[Detected]) -> Table:
    t = Table(title="change points (alerting first)")
    for col in ("id", "series", "run", "before", "after", "change", "kind", "state"):
        t.add_column(col)
    for d in sorted(found, key=lambda d: (d.acknowledged is not None, d.kind != "regression", -abs(d.rel_change))):
        state = f"acknowledged by {d.acknowledged['who']}" if d.acknowledged else (
            ("found late" if d.late else "NEW") if d.new else "alerting")
        state += f" (muted by {d.muted['who']})" if d.muted else ""
        t.add_row(str(d.id), d.key.label(), d.run_id[:12], f"{d.before:.4g}", f"{d.after:.4g}",
                  f"{d.rel_change:+.1%}", d.kind, state)
    return t


DB = typer.Option(None, "--db", help="database URL (default: $KWATCH_DB or sqlite:///kwatch.db)")


def detect_cmd(db: Optional[str] = DB, tier: str = typer.Option("nightly", "--tier"),
               technique: Optional[list[str]] = typer.Option(None, "--technique", "-t"),
               json_out: Optional[Path] = typer.Option(None, "--json"),
               fail_on_new: bool = typer.Option(False, "--fail-on-new", help="exit 1 on a new regression")) -> None:
    """Replay each series' nightly history with the online detector; store and list its alerts."""
    with open_db(db, create=False)() as s, s.begin():
        runs = s.scalar(select(func.count()).select_from(Run).where(Run.tier == tier))
        found = detect(s, tier, technique)
    if json_out:
        json_out.write_text(json.dumps({"method": METHOD, "changes": [d.as_dict() for d in found]}, indent=1))
    if not runs:
        console.print(f"no {tier} runs in the database yet: nothing to detect (`kwatch nightly` adds them)")
        return
    Console().print(table(found))
    new_reg = [d for d in found if d.news]
    late = [d for d in found if d.new and d.late]
    console.print(f"{len(found)} change points, {len(new_reg)} new regressions"
                  + (f", {len(late)} found late (listed once, not failing)" if late else ""))
    if fail_on_new and new_reg:
        raise typer.Exit(1)


def ack_cmd(change_point: int = typer.Argument(..., help="change point id (from kwatch detect)"),
            who: str = typer.Option(..., "--who"), why: str = typer.Option(..., "--why"), db: Optional[str] = DB) -> None:
    """Acknowledge a change as intended: re-baseline its series from that run; it stops alerting."""
    if not who.strip() or not why.strip():
        raise typer.BadParameter("--who and --why must not be empty")
    with open_db(db, create=False)() as s, s.begin():
        try:
            aid = acknowledge(s, change_point, who, why)
        except KeyError as exc:
            raise typer.BadParameter(str(exc.args[0]))
    console.print(f"acknowledgement {aid}: change point {change_point} re-baselined by {who}")


def register(app: typer.Typer) -> None:
    app.command("detect")(detect_cmd)
    app.command("ack")(ack_cmd)
