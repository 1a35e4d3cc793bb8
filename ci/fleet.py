"""The runner fleet on Celery: one queue per hardware label, one job at a time per GPU worker.

A job's selection and state live in the project's database (db.models_ci.FleetJob); the broker
(RabbitMQ at $KWATCH_BROKER, e.g. amqp://guest:guest@127.0.0.1:5672//) carries only its id. A worker
acknowledges a message after the job is stored (acks_late), takes one message at a time (prefetch 1)
and a message whose worker died is delivered again (reject_on_worker_lost; a worker killed outright
drops its connection, and RabbitMQ requeues what it had not acknowledged). The code under test runs
in the runner's sandboxed worker process, which gets no database URL; the fleet worker stores the
result document and marks the job done in one transaction, so a job is stored once even when its
message comes twice. Without a broker (the embedded SQLite default), a submitted job runs at once here.
"""
from __future__ import annotations

import os
import socket
import tempfile
import uuid
from datetime import datetime, timezone
from pathlib import Path
from typing import Optional

from celery import Celery
from sqlalchemy import select

from db.engine import open_db
from db.ingest import ingest_doc
from db.models_ci import FleetJob
from runners.backfill import run_in_tree, spec_of
from runners.pool import Worker
from runners.resultfile import load
from runners.run import RunOptions, execute
from runners.trees import commit_info, export_tree

TASK = "kwatch.run_job"
SPEC_KEYS = ("tier", "techniques", "impls", "cases", "ref", "timeout_s")


def broker_url(url: Optional[str] = None) -> Optional[str]:
    """--broker beats $KWATCH_BROKER; None: no broker (jobs run where they are submitted)."""
    return url or os.environ.get("KWATCH_BROKER") or None


def queue_of(label: str) -> str:
    """The queue a hardware label's jobs go to."""
    return f"kwatch.{label}"


def make_app(broker: Optional[str]) -> Celery:
    """The Celery app: late acknowledgement, one message at a time, redelivery after a lost worker."""
    app = Celery("kwatch", broker=broker or "memory://")
    app.conf.update(task_acks_late=True, task_reject_on_worker_lost=True, worker_prefetch_multiplier=1,
                    task_always_eager=broker is None, task_eager_propagates=True, task_ignore_result=True,
                    broker_connection_retry_on_startup=True, worker_hijack_root_logger=False,
                    task_create_missing_queues=True, worker_cancel_long_running_tasks_on_connection_loss=True)
    app.task(name=TASK, acks_late=True, reject_on_worker_lost=True)(run_job)
    return app


def now() -> datetime:
    return datetime.now(timezone.utc)


def submit(db: Optional[str], broker: Optional[str], label: str, spec: dict, batch: Optional[str] = None) -> str:
    """Record a job and send it to its label's queue (without a broker: run it here); the job id."""
    job_id = uuid.uuid4().hex
    spec = {k: spec.get(k) for k in SPEC_KEYS}
    with open_db(db)() as s, s.begin():
        s.add(FleetJob(id=job_id, batch=batch or f"adhoc-{now():%Y-%m-%d}", label=label, spec=spec,
                       status="queued", attempts=0, created_at=now()))
    app = make_app(broker)
    if broker is None:
        _DB["url"] = db
    app.send_task(TASK, args=[job_id], queue=queue_of(label)) if broker else app.tasks[TASK].apply(args=[job_id])
    return job_id


_DB: dict = {"url": None}  # the database a worker stores into (set by `kwatch worker --db`)
_RUNNER: dict = {}  # the fleet worker's long-lived sandboxed runner process, kept between jobs


def _claim(factory, job_id: str) -> Optional[dict]:
    """Mark the job running here and return its spec; None if it is finished already (a redelivery)."""
    with factory() as s, s.begin():
        job = s.get(FleetJob, job_id)
        if job is None or job.status in ("done", "failed"):
            return None
        job.status, job.attempts, job.started_at = "running", job.attempts + 1, now()
        job.worker = f"{socket.gethostname()}:{os.getpid()}"
        return dict(job.spec)


def _finish(factory, job_id: str, doc: Optional[dict], error: Optional[str]) -> None:
    with factory() as s, s.begin():
        job = s.get(FleetJob, job_id)
        if doc is not None:
            job.run_id = ingest_doc(s, doc, f"job {job_id}", "kwatch").run_id
        job.status, job.error, job.finished_at = ("done" if error is None else "failed"), error, now()


def run_job(job_id: str) -> None:
    """The Celery task: run the job's selection (at its git ref, if any), store the run, mark the job."""
    factory = open_db(_DB["url"])
    spec = _claim(factory, job_id)
    if spec is None:
        return
    try:
        doc = measure(spec)
    except Exception as exc:  # the job is failed with its error; the worker goes on
        _finish(factory, job_id, None, f"{type(exc).__name__}: {exc}"[:4000])
        return
    _finish(factory, job_id, doc, None)


def measure(spec: dict) -> dict:
    """The result document of a job: this checkout's code, or the tree of spec["ref"] (runners.trees)."""
    tier, timeout = spec.get("tier") or "nightly", spec.get("timeout_s") or 600.0
    if not spec.get("ref"):
        opts = RunOptions(tier=tier, techniques=spec.get("techniques") or [], impls=spec.get("impls") or [],
                          cases=spec.get("cases") or [], reason="fleet", timeout_s=timeout)
        return execute(opts, worker=_runner()).doc
    with tempfile.TemporaryDirectory(prefix="kwatch-job-") as tmp:
        tree = export_tree(commit_info(spec["ref"]), Path(tmp))
        out = Path(tmp) / "run.json"
        proc = run_in_tree(tree, {**spec_of(tier, spec.get("techniques"), spec.get("impls"), spec.get("cases"),
                                           "auto", timeout), "out": str(out)})
        if proc.returncode != 0 or not out.exists():
            raise RuntimeError(f"{spec['ref']}: exit {proc.returncode}: {proc.stderr[-1500:]}")
        return load(out)


def _runner():
    """This fleet worker's sandboxed runner process (started on first use, restarted if it died)."""
    w = _RUNNER.get("worker")
    if w is None or not w.alive():
        import torch  # heavy: only a worker that runs jobs here needs it

        w = _RUNNER["worker"] = Worker(interpret_triton=not torch.cuda.is_available())
    return w


def jobs(db: Optional[str], batch: Optional[str] = None, limit: int = 200) -> list[FleetJob]:
    """Jobs of a batch (default: the newest batch), newest first."""
    with open_db(db)() as s:
        if batch is None:
            batch = s.scalar(select(FleetJob.batch).order_by(FleetJob.created_at.desc()).limit(1))
        rows = s.scalars(select(FleetJob).where(FleetJob.batch == batch)
                         .order_by(FleetJob.created_at.desc()).limit(limit)).all()
        s.expunge_all()
        return list(rows)


def work(db: Optional[str], broker: str, labels: list[str], name: Optional[str] = None) -> None:
    """Run a fleet worker for these labels until stopped: one job at a time (one GPU)."""
    _DB["url"] = db
    app = make_app(broker)
    app.worker_main(["worker", "-Q", ",".join(queue_of(lb) for lb in labels), "--pool", "solo",
                     "--concurrency", "1", "--prefetch-multiplier", "1", "--without-gossip", "--without-mingle",
                     "-n", name or f"kwatch-{'-'.join(labels)}-{os.getpid()}@{socket.gethostname()}",
                     "--loglevel", "INFO"])
