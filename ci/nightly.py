"""`kwatch nightly`: run the nightly tier, ingest, detect change points, write the report; exit 1 when the night fails."""
from __future__ import annotations

import json
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from sqlalchemy import select

from ci.detect import detect, session_mutes
from ci.gate import run_gate
from ci.gate_refs import RunData, from_document
from ci.report_nightly import failed, new_histories, run_dates, summarize, to_html, to_markdown, too_noisy
from db.detector import DetectorSettings
from db.engine import open_db
from db.ingest import ingest_doc, load_any
from db.models import Environment, Run
from db.series import all_series, run_document
from db.spread_history import table_for
from db.verdict import Thresholds
from db.verdict.identity import hardware_differs
from db.validate import ResultFileError
from runners import cli as runners_cli

console = Console(stderr=True)


def previous_run(session, this: Run, env: dict) -> Optional[str]:
    """The newest earlier run of this run's tier on the same GPU (db.verdict.identity: a host's CPU string
    does not make another GPU), whatever its software: a software change is then nothing compared."""
    q = (select(Run.id, Environment.raw).join(Environment, Environment.id == Run.environment_id)
         .where(Run.tier == this.tier, Run.id != this.id, Run.started_at < this.started_at)
         .order_by(Run.started_at.desc()).limit(200))
    return next((rid for rid, raw in session.execute(q) if not hardware_differs(raw or {}, env)), None)


def night_verdicts(session, doc: dict, mutes: list[dict] = ()):
    """This run judged series by series (db.verdict, as the gate) against the previous run of its tier
    on the same hardware, mutes applied; with no previous run every series is "missing baseline" and
    failures are new."""
    cur = from_document(doc["run"]["id"], doc, "database")
    this = session.get(Run, doc["run"]["id"])
    prev = previous_run(session, this, cur.run.get("env") or {})
    base = (from_document(prev, run_document(session, prev), "database") if prev else
            RunData("none", "database", {}, [], cur.hardware_key, cur.software_key))
    return run_gate(base, cur, Thresholds(spreads=table_for(session, {doc["run"]["id"]})), mutes=mutes)


def nightly(db: Optional[str], doc: dict, out_dir: Path, techniques: Optional[list[str]] = None) -> tuple[dict, int]:
    """Ingest a nightly document, detect, write nightly.md / nightly.html / nightly.json; (summary, exit code)."""
    factory = open_db(db)
    with factory() as s, s.begin():
        if s.get(Run, doc["run"]["id"]) is None:  # a fleet job's run is stored by its worker already
            ingest_doc(s, doc, "nightly", "kwatch")
    console.print(f"[bold]ingested[/bold] run {doc['run']['id']}")
    with factory() as s, s.begin():
        changes = detect(s, doc["run"]["tier"], techniques)
        verdicts = night_verdicts(s, doc, session_mutes(s))
    console.print(f"[bold]detected[/bold] {len(changes)} change points")
    with factory() as s:
        series = all_series(s, doc["run"]["tier"], techniques or None, with_samples=False)
    summary = summarize(doc, changes, verdicts, too_noisy(series),
                        new_histories(series, doc["run"]["id"], DetectorSettings().min_nights), run_dates(series))
    md = to_markdown(summary)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "nightly.md").write_text(md)
    (out_dir / "nightly.html").write_text(to_html(summary, md, series, changes))
    (out_dir / "nightly.json").write_text(json.dumps(
        {"run_id": doc["run"]["id"], "counts": summary["counts"],
         "new_regressions": [c.as_dict() for c in summary["new_regressions"]],
         "alerting": [c.as_dict() for c in summary["alerting"]], "found_late": [c.as_dict() for c in summary["late"]],
         "failing_against_previous": summary["failing_against_previous"],
         "failures": summary["failures"],
         "expected_failures": summary["expected"], "against_previous": summary["night"],
         "too_noisy": summary["too_noisy"], "new_histories": summary["new_histories"],
         "time": summary["time"]}, indent=1, default=str))
    console.print(f"[bold]report[/bold] {out_dir / 'nightly.md'}, {out_dir / 'nightly.html'}")
    code = 3 if summary["night"].get("nothing_compared") else 1 if failed(summary) else 0
    return summary, code


def nightly_cmd(db: Optional[str] = typer.Option(None, "--db", help="database URL (default: $KWATCH_DB or sqlite)"),
                tier: str = typer.Option("nightly", "--tier"),
                technique: Optional[list[str]] = runners_cli.TECH, impl: Optional[list[str]] = runners_cli.IMPL,
                out_dir: Path = typer.Option(Path("nightly-report"), "--out-dir", help="report folder"),
                result: Optional[Path] = typer.Option(None, "--result", help="use this result file instead of running"),
                device: str = runners_cli.DEVICE, timeout: float = runners_cli.TIMEOUT) -> None:
    """Run the nightly tier (or take --result), ingest, detect, report; exit 1 when the night fails
    (ci.report_nightly.failed)."""
    if result is not None:
        try:
            doc, _ = load_any(result)
        except ResultFileError as exc:
            console.print(f"[red]refused:[/red] {exc}")
            raise typer.Exit(2)
    else:
        out_dir.mkdir(parents=True, exist_ok=True)
        stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S")
        path = out_dir / f"run-{tier}-{stamp}.json"
        opts = runners_cli.options(tier, technique, impl, None, device, "nightly", timeout, None)
        t0 = time.monotonic()
        try:
            rf = runners_cli.run_with_progress(opts, str(path))
        except KeyError as exc:
            raise typer.BadParameter(str(exc.args[0]))
        runners_cli.report(rf, str(path), time.monotonic() - t0)
        doc = rf.doc
    summary, code = nightly(db, doc, out_dir, technique)
    print((out_dir / "nightly.md").read_text())
    if code == 3:
        console.print(f"nightly: FAIL: {summary['night']['nothing_compared']}", markup=False, highlight=False)
    elif code:
        console.print(f"[red]nightly: {len(summary['new_regressions'])} new regressions, "
                      f"{len(summary['failing_against_previous'])} regressed against the previous night, "
                      f"{len(summary['new_failures'])} new failures[/red]")
    raise typer.Exit(code)


def register(app: typer.Typer) -> None:
    app.command("nightly")(nightly_cmd)
