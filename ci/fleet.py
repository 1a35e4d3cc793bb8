"""The runner fleet on Celery: one queue per hardware label, one job at a time per GPU worker.

A job's selection and state live in the project's database (db.models_ci.FleetJob); the broker
(RabbitMQ at $KWATCH_BROKER, e.g. amqp://guest:guest@127.0.0.1:5672//) carries only its id. A worker
acknowledges a message after the job is stored (acks_late), takes one message at a time (prefetch 1)
and a message whose worker died is delivered again (reject_on_worker_lost; a worker killed outright
drops its connection, and RabbitMQ requeues what it had not acknowledged). A job runs on the worker's
one pool thread while its main thread keeps the broker connection alive (heartbeats every
$KWATCH_BROKER_HEARTBEAT seconds, default 60), so a job of any length keeps its message. The claim,
the lease and the store (ci.fleet_lease) make each job run and be stored once, even when its message
comes twice. The code under test runs in the runner's sandboxed worker process, which gets no
database URL. Without a broker (the embedded SQLite default), a submitted job runs at once here.
"""
from __future__ import annotations

import os
import socket
import tempfile
import uuid
from pathlib import Path
from typing import Optional

from celery import Celery
from sqlalchemy import select

from ci.fleet_lease import Lease, claim, now
from db.engine import open_db
from db.models_ci import FleetJob
from db.urls import mask_url, scrub
from runners.backfill import run_in_tree, spec_of
from runners.pool import Worker
from runners.resultfile import load
from runners.run import RunOptions, execute
from runners.trees import commit_info, export_tree

TASK = "kwatch.run_job"
SPEC_KEYS = ("tier", "techniques", "impls", "cases", "ref", "timeout_s")


BROKER_SCHEMES = ("amqp", "amqps", "pyamqp")


class FleetError(ValueError):
    """A fleet command cannot go on (a broker it cannot use or reach, an unknown tier): one line."""


def broker_url(url: Optional[str] = None) -> Optional[str]:
    """--broker beats $KWATCH_BROKER; None: no broker (jobs run where they are submitted). Only
    RabbitMQ (amqp://): the fleet relies on its redelivery of unacknowledged messages."""
    url = url or os.environ.get("KWATCH_BROKER") or None
    if url is not None and url.split("://", 1)[0].lower() not in BROKER_SCHEMES:
        raise FleetError(f"broker {mask_url(url)}: only RabbitMQ is supported (amqp://user:password@host:5672//)")
    return url


def queue_of(label: str) -> str:
    """The queue a hardware label's jobs go to."""
    return f"kwatch.{label}"


def listeners(broker: Optional[str], label: str) -> Optional[int]:
    """How many workers consume a label's queue now (RabbitMQ's consumer count; 0 for a queue nobody declared);
    None without a broker or when the broker cannot be asked."""
    if broker is None:
        return None
    import kombu
    from amqp.exceptions import NotFound

    try:
        with kombu.Connection(broker, connect_timeout=5) as conn:
            conn.ensure_connection(max_retries=0)  # one try: default_channel alone retries for seconds
            try:
                return conn.default_channel.queue_declare(queue=queue_of(label), passive=True).consumer_count
            except NotFound:
                return 0
    except Exception:  # an unreachable broker: the count is unknown, the wait goes on by its timeout
        return None


def make_app(broker: Optional[str]) -> Celery:
    """The Celery app: late acknowledgement, one message at a time, redelivery after a lost worker."""
    app = Celery("kwatch", broker=broker or "memory://")
    app.conf.update(task_acks_late=True, task_reject_on_worker_lost=True, worker_prefetch_multiplier=1,
                    task_always_eager=broker is None, task_eager_propagates=True, task_ignore_result=True,
                    broker_connection_retry_on_startup=True, worker_hijack_root_logger=False,
                    task_create_missing_queues=True, broker_connection_timeout=5,
                    broker_heartbeat=float(os.environ.get("KWATCH_BROKER_HEARTBEAT") or 60),
                    task_publish_retry_policy={"max_retries": 2, "interval_start": 0.5, "interval_step": 1},
                    # a job whose connection dropped keeps running: its lease tells the redelivery so
                    worker_cancel_long_running_tasks_on_connection_loss=False)
    app.task(name=TASK, acks_late=True, reject_on_worker_lost=True)(run_job)
    _APP["app"] = app
    return app


def check_spec(spec: dict) -> None:
    """Refuse a selection no worker could run (unknown tier; unknown technique, impl or case of this
    checkout when the job measures no other ref) before it is queued: KeyError or FleetError."""
    from suite.spec import TIERS

    if spec.get("tier") not in TIERS:
        raise FleetError(f"unknown tier {str(spec.get('tier'))[:80]!r}; known: {', '.join(TIERS)}")
    if not spec.get("ref"):
        from runners.run import plan

        plan(RunOptions(tier=spec["tier"], techniques=spec.get("techniques") or [], impls=spec.get("impls") or [],
                        cases=spec.get("cases") or []))


def submit(db: Optional[str], broker: Optional[str], label: str, spec: dict, batch: Optional[str] = None) -> str:
    """Record a job and send it to its label's queue (without a broker: run it here); the job id.
    A broker that cannot be reached leaves the job failed with that error and raises FleetError."""
    job_id = uuid.uuid4().hex
    spec = {k: spec.get(k) for k in SPEC_KEYS}
    factory = open_db(db)
    with factory() as s, s.begin():
        s.add(FleetJob(id=job_id, batch=batch or f"adhoc-{now():%Y-%m-%d}", label=label, spec=spec,
                       status="queued", attempts=0, created_at=now()))
    app = make_app(broker)
    if broker is None:
        _DB["url"] = db
        app.tasks[TASK].apply(args=[job_id])
        return job_id
    try:
        app.send_task(TASK, args=[job_id], queue=queue_of(label))
    except Exception as exc:  # kombu's OperationalError and the socket errors under it
        why = f"broker {mask_url(broker)} unreachable: {' '.join(str(exc).split())[:300]}"
        with factory() as s, s.begin():
            job = s.get(FleetJob, job_id)
            job.status, job.error, job.finished_at = "failed", why, now()
        raise FleetError(f"{why}; job {job_id[:12]} not queued (marked failed)") from None
    return job_id


_DB: dict = {"url": None}  # the database a worker stores into (set by `kwatch worker --db`)
_APP: dict = {}  # this process's Celery app (a put-off duplicate is sent through it)
_RUNNER: dict = {}  # the fleet worker's long-lived sandboxed runner process, kept between jobs


def run_job(job_id: str) -> None:
    """The Celery task: claim the job, run its selection (at its git ref, if any) while renewing the
    lease, store the run and mark the job; a duplicate of a job another live worker runs is put off."""
    factory = open_db(_DB["url"])
    owner = f"{socket.gethostname()}:{os.getpid()}"
    got = claim(factory, job_id, owner)
    if got.busy_until is not None:  # a redelivery while the job runs elsewhere: look again when its lease ends
        wait = max(1.0, (got.busy_until - now()).total_seconds() + 1.0)
        _APP["app"].send_task(TASK, args=[job_id], queue=queue_of(got.label), countdown=wait)
        return
    if got.spec is None:  # finished already, or unknown
        return
    lease = Lease(factory, job_id, owner, got.attempt)
    lease.start()
    try:
        doc, error = measure(got.spec), None
    except Exception as exc:  # the job is failed with its error; the worker goes on
        doc, error = None, scrub(f"{type(exc).__name__}: {exc}")[:4000]
    if not lease.finish(doc, error):
        from celery.utils.log import get_task_logger

        get_task_logger(__name__).warning(f"lost job {job_id}: its lease ran out and another worker took it "
                                          f"over (attempt {got.attempt} not stored)")


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
    from runners.hide_secrets import hide_own_secrets

    hide_own_secrets()  # the --db and --broker passwords off this long-lived process's /proc cmdline
    _DB["url"] = db
    app = make_app(broker)
    # the threads pool with one thread: the job runs there while the main thread answers heartbeats
    app.worker_main(["worker", "-Q", ",".join(queue_of(lb) for lb in labels), "--pool", "threads",
                     "--concurrency", "1", "--prefetch-multiplier", "1", "--without-gossip", "--without-mingle",
                     "-n", name or f"kwatch-{'-'.join(labels)}-{os.getpid()}@{socket.gethostname()}",
                     "--loglevel", "INFO"])
