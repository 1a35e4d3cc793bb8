"""Each fleet job runs and is stored once on the real RabbitMQ and PostgreSQL, however long it runs and
whoever dies: a job longer than the broker's heartbeat timeout keeps its message, a duplicate message
for a running job is put off and dropped, and a worker stopped mid-job (its lease run out, its
connection dropped) has its job taken over and stores nothing when it resumes."""
from __future__ import annotations

import os
import signal
import time

import pytest
from sqlalchemy import func, select

from tests.test_fleet import BROKER, QUICK, _pid, _wait, fleet, pytestmark  # noqa: F401  (the fixture)

LONG = {**QUICK, "impls": ["long"]}  # about 12 s: six calls of a GEMM that sleeps 2 s
HEARTBEAT = "2"  # RabbitMQ drops a connection silent for about twice this


def _received(tmp_path) -> int:
    """How many messages of the (one) job the workers of this test received (their logs)."""
    return sum(1 for line in _logs(tmp_path).splitlines() if "kwatch.run_job[" in line and "] received" in line)


def _logs(tmp_path) -> str:
    return "".join(p.read_text() for p in sorted(tmp_path.glob("worker-*.log")))


def _runs(db_url) -> int:
    from db.engine import open_db
    from db.models import Run

    with open_db(db_url)() as s:
        return s.scalar(select(func.count()).select_from(Run))


def _running(db_url, batch, timeout_s=120):
    from ci.fleet import jobs

    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        (j,) = jobs(db_url, batch)
        if j.status == "running":
            return j
        time.sleep(0.2)
    raise AssertionError(f"job of {batch} never started: {j.status}")


@pytest.mark.slow
def test_a_job_longer_than_the_heartbeat_timeout_is_received_run_and_stored_once(fleet, pg_url, tmp_path, monkeypatch):
    from ci.fleet import submit

    monkeypatch.setenv("KWATCH_BROKER_HEARTBEAT", HEARTBEAT)
    pids = fleet("cpu-h", 2)
    label, batch = f"cpu-h-{fleet.tag}", f"hb-{fleet.tag}"
    t0 = time.monotonic()
    submit(pg_url, BROKER, label, LONG, batch)
    (done,) = _wait(pg_url, batch, 1, timeout_s=120)
    seconds = time.monotonic() - t0
    assert seconds > 4 * int(HEARTBEAT), seconds  # the job outlasted the broker's heartbeat timeout
    assert done.status == "done" and done.attempts == 1 and done.error is None, (done.status, done.error)
    time.sleep(3 * int(HEARTBEAT))  # a redelivery, had the connection dropped, would arrive by now
    assert _received(tmp_path) == 1
    assert _runs(pg_url) == 1
    for pid in pids:  # a worker's --broker password is masked in its /proc cmdline
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            cmdline = f.read()
        assert b"--broker\0amqp://guest:*****@127.0.0.1" in cmdline, cmdline
    logs = _logs(tmp_path)
    assert "missed heartbeats" not in logs and "Connection to broker lost" not in logs


@pytest.mark.slow
def test_a_duplicate_message_for_a_running_job_is_put_off_then_dropped(fleet, pg_url, tmp_path, monkeypatch):
    from ci.fleet import TASK, jobs, make_app, queue_of, submit

    monkeypatch.setenv("KWATCH_BROKER_HEARTBEAT", HEARTBEAT)
    fleet("cpu-d", 2)
    label, batch = f"cpu-d-{fleet.tag}", f"dup-{fleet.tag}"
    job_id = submit(pg_url, BROKER, label, LONG, batch)
    first = _running(pg_url, batch)
    app = make_app(BROKER)
    for _ in range(2):  # what RabbitMQ does after a dropped connection: the message again, to anyone
        app.send_task(TASK, args=[job_id], queue=queue_of(label))
    (done,) = _wait(pg_url, batch, 1, timeout_s=120)
    time.sleep(7)  # the put-off duplicates come back after the lease (5 s) and find the job done
    (after,) = jobs(pg_url, batch)
    assert after.status == "done" and after.attempts == 1 and after.worker == first.worker
    assert after.run_id == done.run_id and _runs(pg_url) == 1
    assert _received(tmp_path) >= 5  # the job, two duplicates, and each put off at least once


@pytest.mark.slow
def test_a_stopped_worker_loses_its_job_to_another_and_stores_nothing_when_it_resumes(fleet, pg_url, tmp_path,
                                                                                     monkeypatch):
    from ci.fleet import jobs, submit

    monkeypatch.setenv("KWATCH_BROKER_HEARTBEAT", HEARTBEAT)
    pids = fleet("cpu-s", 2)
    label, batch = f"cpu-s-{fleet.tag}", f"stop-{fleet.tag}"
    submit(pg_url, BROKER, label, LONG, batch)
    first = _running(pg_url, batch)
    victim = _pid(first)
    time.sleep(2.0)  # inside the job
    os.killpg(victim, signal.SIGSTOP)  # lease and heartbeats stop; the broker drops the connection
    try:
        (done,) = _wait(pg_url, batch, 1, timeout_s=120)
    finally:
        os.killpg(victim, signal.SIGCONT)
    assert done.status == "done" and done.attempts == 2 and _pid(done) != victim and _pid(done) in pids
    deadline = time.monotonic() + 60  # the resumed worker finishes its stale run and tries to store it
    while time.monotonic() < deadline and "lost job" not in _logs(tmp_path):
        time.sleep(0.5)
    assert f"lost job {done.id}" in _logs(tmp_path), _logs(tmp_path)[-3000:]
    (after,) = jobs(pg_url, batch)
    assert (after.status, after.attempts, after.run_id, after.worker) == ("done", 2, done.run_id, done.worker)
    assert _runs(pg_url) == 1


def test_claim_lease_and_store_fence_each_attempt(db_url, monkeypatch):
    """Without a broker, on SQLite and PostgreSQL: a second claim of a running job is refused while its
    lease lives, taken over once it ran out, and only the attempt that holds the job stores its run."""
    from datetime import timedelta

    from ci.fleet_lease import Lease, claim, now
    from db.engine import open_db
    from db.models_ci import FleetJob
    from tests.ingest_docs import doc

    monkeypatch.setenv("KWATCH_LEASE_S", "30")
    factory = open_db(db_url)
    with factory() as s, s.begin():
        s.add(FleetJob(id="j1", batch="b", label="x", spec={"tier": "smoke"}, status="queued", attempts=0,
                       created_at=now()))
    first = claim(factory, "j1", "host:1")
    assert first.spec == {"tier": "smoke"} and first.attempt == 1
    busy = claim(factory, "j1", "host:2")  # a redelivery while the lease lives
    assert busy.spec is None and busy.busy_until > now() + timedelta(seconds=20) and busy.label == "x"
    with factory() as s, s.begin():  # worker 1 stopped: its lease ran out
        s.get(FleetJob, "j1").lease_until = now() - timedelta(seconds=1)
    second = claim(factory, "j1", "host:2")
    assert second.attempt == 2
    assert Lease(factory, "j1", "host:1", 1).finish(doc("stale-run"), None) is False  # fenced: stores nothing
    assert Lease(factory, "j1", "host:2", 2).finish(doc("good-run"), None) is True
    assert claim(factory, "j1", "host:3").spec is None and claim(factory, "j1", "host:3").busy_until is None
    assert claim(factory, "nope", "host:3").spec is None
    with factory() as s:
        job = s.get(FleetJob, "j1")
        assert (job.status, job.attempts, job.run_id, job.worker, job.lease_until) == ("done", 2, "good-run",
                                                                                       "host:2", None)
    assert _runs(db_url) == 1
