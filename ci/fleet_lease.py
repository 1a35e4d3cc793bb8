"""A fleet job's claim, lease and store: each job runs and is stored once, whoever dies and however
often its message comes.

A worker claims a job in one UPDATE that succeeds only while the job is queued or its lease has run
out; the claim counts an attempt, which fences everything the worker does later. While the job runs
the worker renews its lease every LEASE_S / 3 seconds. A message that finds the job running under a
live lease is a duplicate (the broker redelivered it after a dropped connection): it is put off until
the lease would have run out, then dropped if the job is finished, or the job is taken over if its
worker died. The result is stored only by the attempt that still holds the job, in the transaction
that marks it done, so a worker that was stopped and resumes after another took over stores nothing.
Leases are compared on the workers' clocks (UTC): hosts must agree within a few seconds of LEASE_S.
"""
from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Optional

from sqlalchemy import and_, or_, update

from db.ingest import ingest_doc
from db.models_ci import FleetJob


def lease_s() -> float:
    """Seconds a claim lasts without renewal ($KWATCH_LEASE_S, default 60)."""
    return float(os.environ.get("KWATCH_LEASE_S") or 60.0)


def now() -> datetime:
    return datetime.now(timezone.utc)


@dataclass
class Claim:
    """The outcome of a claim: spec and attempt when taken; else why not (gone, finished, busy)."""
    spec: Optional[dict] = None
    attempt: int = 0
    label: str = ""
    busy_until: Optional[datetime] = None  # set when another live worker holds the job


def claim(factory, job_id: str, owner: str) -> Claim:
    """Take the job for `owner` if it is queued or its lease expired (one atomic UPDATE)."""
    t = now()
    with factory() as s, s.begin():
        taken = s.execute(
            update(FleetJob)
            .where(FleetJob.id == job_id,
                   or_(FleetJob.status == "queued",
                       and_(FleetJob.status == "running",
                            or_(FleetJob.lease_until.is_(None), FleetJob.lease_until < t))))
            .values(status="running", attempts=FleetJob.attempts + 1, started_at=t, worker=owner,
                    lease_until=t + timedelta(seconds=lease_s()))
            .execution_options(synchronize_session=False)).rowcount
        job = s.get(FleetJob, job_id, populate_existing=True)
        if job is None:
            return Claim()
        if taken == 1:
            return Claim(spec=dict(job.spec), attempt=job.attempts, label=job.label)
        if job.status == "running":
            until = job.lease_until or t
            return Claim(busy_until=until if until.tzinfo else until.replace(tzinfo=timezone.utc), label=job.label)
        return Claim()  # done or failed already


class Lease(threading.Thread):
    """Renews a claimed job's lease until stopped; `lost` once another worker has taken the job."""

    def __init__(self, factory, job_id: str, owner: str, attempt: int) -> None:
        super().__init__(daemon=True, name=f"lease-{job_id[:8]}")
        self.factory, self.job_id, self.owner, self.attempt = factory, job_id, owner, attempt
        self.lost, self._stop_ = False, threading.Event()

    def run(self) -> None:
        while not self._stop_.wait(lease_s() / 3):
            try:
                with self.factory() as s, s.begin():
                    n = s.execute(update(FleetJob).where(*self._mine())
                                  .values(lease_until=now() + timedelta(seconds=lease_s()))
                                  .execution_options(synchronize_session=False)).rowcount
            except Exception:  # the database is away for a moment: try again at the next beat
                continue
            if n == 0:
                self.lost = True
                return

    def _mine(self):
        return (FleetJob.id == self.job_id, FleetJob.worker == self.owner, FleetJob.attempts == self.attempt,
                FleetJob.status == "running")

    def stop(self) -> None:
        self._stop_.set()
        if self.ident is not None:  # started
            self.join(timeout=30)

    def finish(self, doc: Optional[dict], error: Optional[str]) -> bool:
        """Store the run and mark the job done (or failed) if this attempt still holds it; False if not."""
        self.stop()
        with self.factory() as s, s.begin():
            job = s.get(FleetJob, self.job_id, with_for_update=True, populate_existing=True)
            if job is None or (job.worker, job.attempts, job.status) != (self.owner, self.attempt, "running"):
                return False  # another worker took the job over while this one was stopped: it stores it
            if doc is not None:
                job.run_id = ingest_doc(s, doc, f"job {self.job_id}", "kwatch").run_id
            job.status, job.error, job.finished_at = ("done" if error is None else "failed"), error, now()
            job.lease_until = None
            return True
