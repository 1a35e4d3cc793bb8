"""`kwatch submit`, `kwatch worker --labels h200,...`, `kwatch jobs`: the runner fleet (ci.fleet)."""
from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.table import Table

from runners.cli_options import CASE, IMPL, TECH, TIMEOUT

console = Console(stderr=True)
DB = typer.Option(None, "--db", help="database URL (default: $KWATCH_DB or sqlite:///kwatch.db)")
BROKER = typer.Option(None, "--broker", help="Celery broker URL (default: $KWATCH_BROKER; none: run here)")


def labels_of(text: str) -> list[str]:
    """"h200, h100" -> ["h200", "h100"]; a label is letters, digits, '-' and '_'."""
    labels = [x.strip() for x in text.split(",") if x.strip()]
    bad = [x for x in labels if not x.replace("-", "").replace("_", "").isalnum()]
    if not labels or bad:
        raise typer.BadParameter(f"labels must be letters, digits, '-' or '_', comma-separated: {text!r}")
    return labels


def submit_cmd(label: str = typer.Option(..., "--label", help="hardware label = queue, e.g. h200"),
               tier: str = typer.Option("nightly", "--tier"), technique: Optional[list[str]] = TECH,
               impl: Optional[list[str]] = IMPL, case: Optional[list[str]] = CASE,
               ref: Optional[str] = typer.Option(None, "--ref", help="git ref to measure (default: the worker's checkout)"),
               batch: Optional[str] = typer.Option(None, "--batch", help="group name, e.g. the night"),
               timeout: float = TIMEOUT, db: Optional[str] = DB, broker: Optional[str] = BROKER) -> None:
    """Queue a job for the workers of one hardware label (without a broker: run it here now)."""
    from ci.fleet import FleetError, broker_url, check_spec, submit  # heavy: Celery, only for fleet commands

    spec = {"tier": tier, "techniques": technique or [], "impls": impl or [], "cases": case or [], "ref": ref,
            "timeout_s": timeout}
    try:
        check_spec(spec)
        job_id = submit(db, broker_url(broker), labels_of(label)[0], spec, batch)
    except FleetError as exc:
        _refuse("submit", exc)
    print(job_id)


def _refuse(command: str, exc: Exception) -> None:
    """One line and exit 2 for what the user must change (the broker, the tier)."""
    console.print(f"{command}: {exc}", markup=False, highlight=False, soft_wrap=True)
    raise typer.Exit(2)


def worker_cmd(labels: str = typer.Option(..., "--labels", help="comma-separated hardware labels, e.g. h200"),
               db: Optional[str] = DB, broker: Optional[str] = BROKER,
               name: Optional[str] = typer.Option(None, "--name", help="worker name (default: labels-pid@host)")) -> None:
    """A GPU host's long-running worker: one job at a time from its labels' queues, stored in --db."""
    from ci.fleet import FleetError, broker_url, work  # heavy: Celery

    try:
        url = broker_url(broker)
    except FleetError as exc:
        _refuse("worker", exc)
    if url is None:
        console.print("worker: no broker (give --broker or set KWATCH_BROKER); on one host, "
                      "`kwatch submit` without a broker runs the job at once")
        raise typer.Exit(2)
    work(db, url, labels_of(labels), name)


def jobs_cmd(batch: Optional[str] = typer.Option(None, "--batch", help="default: the newest batch"),
             db: Optional[str] = DB) -> None:
    """The jobs of a batch (the night) and where they stand."""
    from ci.fleet import jobs  # heavy: Celery

    rows = jobs(db, batch)
    t = Table("job", "batch", "label", "status", "tries", "worker", "run", "error",
              title=f"{len(rows)} jobs", title_justify="left")
    for j in rows:
        t.add_row(j.id[:12], j.batch, j.label, j.status, str(j.attempts), j.worker or "", (j.run_id or "")[:12],
                  (j.error or "").splitlines()[0][:60] if j.error else "")
    Console().print(t)


def nightly_fleet_cmd(labels: str = typer.Option("h100,h200", "--labels", help="hardware labels, one nightly job each"),
                      batch: Optional[str] = typer.Option(None, "--batch", help="default: nightly-<UTC date>"),
                      submit_jobs: bool = typer.Option(True, "--submit/--no-submit",
                                                       help="--no-submit: only wait for and report an existing batch"),
                      ref: Optional[str] = typer.Option(None, "--ref", help="git ref the workers measure"),
                      tier: str = typer.Option("nightly", "--tier"), technique: Optional[list[str]] = TECH,
                      wait_timeout: float = typer.Option(3600.0, "--wait-timeout", help="seconds to wait for the jobs"),
                      unserved_after: float = typer.Option(
                          300.0, "--unserved-after",
                          help="stop waiting for a label whose queue no worker has listened to for this many seconds"),
                      out_dir: Path = typer.Option(Path("nightly-report"), "--out-dir"),
                      db: Optional[str] = DB, broker: Optional[str] = BROKER) -> None:
    """The nightly through the fleet: one job per label, one report when all are done or failed; exit 1 on news."""
    from ci.fleet import FleetError, broker_url, check_spec  # heavy: Celery (also under ci.fleet_nightly)
    from ci.fleet_nightly import fan_out, report, wait

    batch = batch or f"nightly-{datetime.now(timezone.utc):%Y-%m-%d}"
    spec = {"tier": tier, "techniques": technique or [], "impls": [], "cases": [], "ref": ref, "timeout_s": 600.0}
    try:
        url = broker_url(broker)
        if submit_jobs:
            check_spec(spec)
            fan_out(db, url, labels_of(labels), batch, spec)
    except FleetError as exc:
        _refuse("nightly-fleet", exc)
    rows, unserved = wait(db, batch, wait_timeout, broker=url, unserved_s=unserved_after)
    code = report(db, batch, rows, out_dir, frozenset(unserved))
    print((out_dir / "nightly.md").read_text())
    raise typer.Exit(code)

