"""A job queue in the database for many GPU runners: `kwatch queue add|work|list`.

On PostgreSQL a job is claimed with SELECT ... FOR UPDATE SKIP LOCKED, so runners polling at once
never take the same job; on SQLite (one writer at a time) a plain transaction does the same.
"""
from __future__ import annotations

import socket
from datetime import datetime, timezone
from typing import Optional

import typer
from rich.console import Console
from rich.table import Table
from sqlalchemy import or_, select

from db.models_ci import Job

console = Console(stderr=True)
queue_app = typer.Typer(no_args_is_help=True, help="Job queue for GPU runners (PostgreSQL: SKIP LOCKED).")


def enqueue(session, kind: str, payload: dict, runner_label: Optional[str] = None, priority: int = 0) -> int:
    """Add a queued job; returns its id."""
    job = Job(kind=kind, payload=payload, runner_label=runner_label, priority=priority, status="queued",
              attempts=0, created_at=datetime.now(timezone.utc))
    session.add(job)
    session.flush()
    return job.id


def claim(session, worker: str, labels: Optional[list[str]] = None, tries: int = 20) -> Optional[Job]:
    """Take the next queued job for these runner labels (or unlabeled), marking it running; None if none.

    The row is locked with FOR UPDATE SKIP LOCKED on PostgreSQL; everywhere the status change is a
    conditional UPDATE (... WHERE status = 'queued'), so a job another runner took first is skipped."""
    from sqlalchemy import update

    q = select(Job.id).where(Job.status == "queued")
    if labels:
        q = q.where(or_(Job.runner_label.is_(None), Job.runner_label.in_(labels)))
    q = q.order_by(Job.priority, Job.id).limit(1)
    if session.bind.dialect.name == "postgresql":
        q = q.with_for_update(skip_locked=True)
    for _ in range(tries):
        jid = session.scalar(q)
        if jid is None:
            return None
        taken = session.execute(update(Job).where(Job.id == jid, Job.status == "queued")
                                .values(status="running", claimed_by=worker, claimed_at=datetime.now(timezone.utc),
                                        attempts=Job.attempts + 1))
        if taken.rowcount == 1:
            job = session.get(Job, jid)
            session.refresh(job)
            return job
    return None


def finish(session, job_id: int, ok: bool, run_id: Optional[str] = None, error: Optional[str] = None) -> None:
    job = session.get(Job, job_id)
    job.status, job.finished_at = ("done" if ok else "failed"), datetime.now(timezone.utc)
    job.run_id, job.error = run_id, error


DB = typer.Option(None, "--db", help="database URL (default: $KWATCH_DB or sqlite:///kwatch.db)")


@queue_app.command("add")
def add_cmd(tier: str = typer.Option("nightly", "--tier"),
            technique: Optional[list[str]] = typer.Option(None, "--technique", "-t"),
            label: Optional[str] = typer.Option(None, "--label", help="runner label, e.g. h200"),
            priority: int = typer.Option(0, "--priority"), db: Optional[str] = DB) -> None:
    """Queue a nightly-style job (run a tier, ingest, detect)."""
    from db.engine import open_db

    with open_db(db)() as s, s.begin():
        jid = enqueue(s, "nightly", {"tier": tier, "techniques": technique or []}, label, priority)
    console.print(f"queued job {jid}")


@queue_app.command("work")
def work_cmd(label: Optional[list[str]] = typer.Option(None, "--label"), db: Optional[str] = DB,
             once: bool = typer.Option(True, "--once/--loop", help="take one job, or loop until the queue is empty"),
             out_dir: str = typer.Option("nightly-report", "--out-dir")) -> None:
    """Claim jobs for this runner and run them (kwatch nightly), recording the outcome."""
    from pathlib import Path

    from ci.nightly import nightly
    from db.engine import open_db
    from runners.cli import options, run_with_progress

    factory = open_db(db)
    worker = socket.gethostname()
    while True:
        with factory() as s, s.begin():
            job = claim(s, worker, label)
            jid, payload = (job.id, dict(job.payload)) if job else (None, None)
        if jid is None:
            console.print("queue empty")
            return
        console.print(f"job {jid}: {payload}")
        try:
            opts = options(payload["tier"], payload["techniques"], None, None, "auto", "nightly", 600.0, None)
            rf = run_with_progress(opts, None)
            _, code = nightly(db, rf.doc, Path(out_dir) / f"job-{jid}", payload["techniques"] or None)
            with factory() as s, s.begin():
                finish(s, jid, True, rf.doc["run"]["id"], None if code == 0 else "new regressions or failures")
        except Exception as exc:  # the job is recorded as failed; the runner goes on
            with factory() as s, s.begin():
                finish(s, jid, False, None, f"{type(exc).__name__}: {exc}")
        if once:
            return


@queue_app.command("list")
def list_cmd(db: Optional[str] = DB) -> None:
    """Jobs, newest first."""
    from db.engine import open_db

    t = Table("id", "kind", "label", "status", "worker", "run", "error")
    with open_db(db)() as s:
        for j in s.scalars(select(Job).order_by(Job.id.desc()).limit(50)):
            t.add_row(str(j.id), j.kind, j.runner_label or "*", j.status, j.claimed_by or "", (j.run_id or "")[:12],
                      (j.error or "")[:40])
    Console().print(t)


def register(app: typer.Typer) -> None:
    app.add_typer(queue_app, name="queue")
