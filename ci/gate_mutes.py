"""Muted series (flaky, known): stored with who, why and until when; `kwatch mute add|list|remove`."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.table import Table
from sqlalchemy import select

from db.actions import mute
from db.alerts import mute_matches
from db.engine import open_db, resolve_url
from db.models_ci import Mute
from db.series import SeriesKey

console = Console(stderr=True)
mute_app = typer.Typer(no_args_is_help=True, help="Mute series in the gate and detector (never silently).")


def _aware(t: Optional[datetime]) -> Optional[datetime]:
    return t.replace(tzinfo=timezone.utc) if t is not None and t.tzinfo is None else t


def _db_exists(db_url: Optional[str]) -> bool:
    url = resolve_url(db_url)
    if url.startswith("sqlite:///"):
        return Path(url[len("sqlite:///"):]).exists()
    return True


def active_mutes(db_url: Optional[str], now: Optional[datetime] = None) -> list[dict]:
    """Mutes in force now, as dicts; none when the database does not exist yet."""
    if not _db_exists(db_url):
        return []
    now = now or datetime.now(timezone.utc)
    with open_db(db_url)() as s:
        rows = s.scalars(select(Mute).order_by(Mute.id)).all()
    out = []
    for m in rows:
        until = _aware(m.until)
        if until is not None and until <= now:
            continue
        out.append({"id": m.id, "technique": m.technique, "impl": m.impl, "case_id": m.case_id,
                    "metric": m.metric, "hardware_key": m.hardware_key, "who": m.who, "why": m.why,
                    "until": until.isoformat() if until else None})
    return out


def matching_mute(key: SeriesKey, mutes: list[dict]) -> Optional[dict]:
    """The first mute whose non-empty fields all equal the series' fields."""
    return next((m for m in mutes if mute_matches(m, key.technique, key.impl, key.case_id, key.metric,
                                                  key.hardware_key)), None)


def parse_until(text: str) -> datetime:
    """'14d', '36h' or an ISO date/time -> aware datetime."""
    now = datetime.now(timezone.utc)
    if text[:-1].isdigit() and text[-1] in "dh":
        return now + timedelta(**{"days" if text[-1] == "d" else "hours": int(text[:-1])})
    t = datetime.fromisoformat(text)
    return t if t.tzinfo else t.replace(tzinfo=timezone.utc)


DB = typer.Option(None, "--db", help="database URL (default: $KWATCH_DB or sqlite:///kwatch.db)")


@mute_app.command("add")
def add(technique: str = typer.Option(..., "--technique", "-t"),
        impl: Optional[str] = typer.Option(None, "--impl", "-i"),
        case: Optional[str] = typer.Option(None, "--case", "-c"),
        metric: Optional[str] = typer.Option(None, "--metric", "-m"),
        hardware_key: Optional[str] = typer.Option(None, "--hardware-key"),
        who: str = typer.Option(..., "--who"), why: str = typer.Option(..., "--why"),
        until: str = typer.Option("14d", "--until", help="ISO date, or a span like 14d / 36h"),
        db: Optional[str] = DB) -> None:
    """Mute a series pattern (empty fields match all) until a date; who and why are required."""
    if not who.strip() or not why.strip():
        raise typer.BadParameter("--who and --why must not be empty")
    end = parse_until(until)
    with open_db(db, create=False)() as s, s.begin():
        mid = mute(s, technique, impl, case, metric, hardware_key, who, why, end)
    console.print(f"mute {mid}: {technique}/{impl or '*'}/{case or '*'}/{metric or '*'} until {end:%Y-%m-%d %H:%M} UTC")


@mute_app.command("list")
def list_(db: Optional[str] = DB) -> None:
    """Mutes in force."""
    t = Table("id", "series", "who", "why", "until")
    for m in active_mutes(db):
        t.add_row(str(m["id"]), f"{m['technique']}/{m['impl'] or '*'}/{m['case_id'] or '*'}/{m['metric'] or '*'}",
                  m["who"], m["why"], m["until"] or "")
    Console().print(t)


@mute_app.command("remove")
def remove(mute_id: int = typer.Argument(...), db: Optional[str] = DB) -> None:
    """Delete a mute by id."""
    with open_db(db, create=False)() as s, s.begin():
        m = s.get(Mute, mute_id)
        if m is None:
            raise typer.BadParameter(f"no mute {mute_id}")
        s.delete(m)
    console.print(f"mute {mute_id} removed")

