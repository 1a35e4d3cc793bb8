"""The runner fleet against the real RabbitMQ and PostgreSQL: every job run once and stored, workers
take only their labels' jobs, a SIGKILLed worker's job is redone by another, and the throughput."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid

import pytest
from sqlalchemy import func, select

from tests.conftest import ROOT

BROKER = os.environ.get("KWATCH_TEST_BROKER", "amqp://guest:guest@127.0.0.1:5672//")
# a worker's lease runs out 5 s after it stopped renewing it (a killed worker's job is taken over then)
FIXTURE = {"KWATCH_EXTRA_TECHNIQUES": "tests.fixtures.fleet", "KWATCH_LEASE_S": "5"}
QUICK = {"tier": "smoke", "techniques": ["fleet_gemm"], "impls": ["quick"], "cases": [], "ref": None,
         "timeout_s": 120.0}


def _broker_up() -> bool:
    import kombu

    try:
        with kombu.Connection(BROKER, connect_timeout=3) as c:
            c.connect()
            return True
    except Exception:
        return False


pytestmark = pytest.mark.skipif(not _broker_up(), reason=f"no RabbitMQ at {BROKER}")


@pytest.fixture
def fleet(pg_url, monkeypatch, tmp_path):
    """Start workers (label -> pids) on queues named for this test only; all stopped and the queues deleted after."""
    monkeypatch.setenv("KWATCH_EXTRA_TECHNIQUES", FIXTURE["KWATCH_EXTRA_TECHNIQUES"])
    tag = uuid.uuid4().hex[:8]
    procs: dict[int, tuple[str, subprocess.Popen]] = {}
    labels: set[str] = set()

    def start(label: str, n: int) -> list[int]:
        label = f"{label}-{tag}"
        labels.add(label)
        pids = []
        for _ in range(n):
            p = subprocess.Popen([sys.executable, "-c", "from ci.cli import main; main()", "worker", "--labels", label,
                                  "--db", pg_url, "--broker", BROKER], cwd=ROOT, env={**os.environ, **FIXTURE},
                                 stdout=subprocess.DEVNULL, stderr=open(tmp_path / f"worker-{label}-{len(procs)}.log", "w"),
                                 start_new_session=True)
            procs[p.pid] = (label, p)
            pids.append(p.pid)
        return pids

    start.tag, start.procs = tag, procs
    yield start
    for _, p in procs.values():
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGTERM)
    for _, p in procs.values():
        try:
            p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
    import kombu

    from ci.fleet import queue_of

    with kombu.Connection(BROKER) as c:
        for label in labels:
            c.default_channel.queue_delete(queue_of(label))


def _wait(db_url, batch, n, timeout_s) -> list:
    from ci.fleet import jobs

    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        rows = jobs(db_url, batch, limit=10_000)
        if len(rows) == n and all(j.status in ("done", "failed") for j in rows):
            return rows
        time.sleep(0.5)
    states = {}
    for j in jobs(db_url, batch, limit=10_000):
        states[j.status] = states.get(j.status, 0) + 1
    raise AssertionError(f"batch {batch} not finished after {timeout_s} s: {states}")


def _pid(job) -> int:
    return int(job.worker.rsplit(":", 1)[1])


def test_200_jobs_on_8_workers_each_run_once_stored_and_only_on_their_labels(fleet, pg_url, tmp_path):
    from ci.fleet import submit
    from db.engine import open_db
    from db.models import Result, Run

    big, small = set(fleet("cpu-a", 6)), set(fleet("cpu-b", 2))
    labels = {"cpu-a": f"cpu-a-{fleet.tag}", "cpu-b": f"cpu-b-{fleet.tag}"}
    batch = f"test-{fleet.tag}"
    t0 = time.monotonic()
    ids = {submit(pg_url, BROKER, labels["cpu-a" if i % 4 else "cpu-b"], QUICK, batch): i % 4 for i in range(200)}
    rows = _wait(pg_url, batch, 200, timeout_s=900)
    seconds = time.monotonic() - t0
    assert {j.id for j in rows} == set(ids)
    assert all(j.status == "done" and j.attempts == 1 and j.error is None for j in rows), \
        [(j.status, j.attempts, j.error) for j in rows if j.status != "done" or j.attempts != 1][:3]
    for j in rows:  # label a went only to a's six workers, label b only to b's two
        assert _pid(j) in (big if ids[j.id] else small), (j.label, j.worker)
    assert len({_pid(j) for j in rows}) >= 4  # the work was spread
    run_ids = [j.run_id for j in rows]
    assert len(set(run_ids)) == 200
    with open_db(pg_url)() as s:
        assert s.scalar(select(func.count()).select_from(Run).where(Run.id.in_(run_ids))) == 200
        per_run = dict(s.execute(select(Result.run_id, func.count()).where(Result.run_id.in_(run_ids))
                                 .group_by(Result.run_id)).all())
        assert len(per_run) == 200 and set(per_run.values()) == {2}  # latency_ms and rel_err of each job
        statuses = set(s.scalars(select(Result.status).where(Result.run_id.in_(run_ids))))
        assert statuses == {"ok"}
    rate = {"jobs": 200, "workers": 8, "seconds": round(seconds, 1), "jobs_per_s": round(200 / seconds, 2),
            "host": f"{os.cpu_count()} CPUs", "broker": "RabbitMQ 127.0.0.1", "db": "PostgreSQL 127.0.0.1"}
    print("fleet throughput:", json.dumps(rate))
    (tmp_path / "throughput.json").write_text(json.dumps(rate))


def test_a_worker_killed_mid_job_has_its_job_redone_by_another(fleet, pg_url):
    from ci.fleet import jobs, submit
    from db.engine import open_db
    from db.models import Run

    pids = fleet("cpu-k", 2)
    label, batch = f"cpu-k-{fleet.tag}", f"kill-{fleet.tag}"
    spec = {**QUICK, "impls": ["slow"]}
    job_id = submit(pg_url, BROKER, label, spec, batch)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        (j,) = jobs(pg_url, batch)
        if j.status == "running":
            break
        time.sleep(0.2)
    assert j.status == "running", j.status
    victim = _pid(j)
    assert victim in pids
    time.sleep(1.0)  # inside the job: correctness check or timing of the slow implementation
    os.killpg(victim, signal.SIGKILL)
    (done,) = _wait(pg_url, batch, 1, timeout_s=300)
    assert done.id == job_id and done.status == "done" and done.attempts == 2
    assert _pid(done) != victim and _pid(done) in pids
    with open_db(pg_url)() as s:  # stored once, by the second worker
        assert s.scalar(select(func.count()).select_from(Run).where(Run.id == done.run_id)) == 1


def test_the_nightly_fans_out_per_label_and_reports_once_with_the_label_nobody_serves(fleet, pg_url, tmp_path):
    from tests.conftest import kwatch

    fleet("cpu-n", 1)
    served, unserved = f"cpu-n-{fleet.tag}", f"b200-{fleet.tag}"
    try:
        out = kwatch("nightly-fleet", "--labels", f"{served},{unserved}", "--tier", "smoke", "-t", "fleet_gemm",
                     "--batch", f"night-{fleet.tag}", "--wait-timeout", "600", "--unserved-after", "15",
                     "--out-dir", str(tmp_path / "report"), "--db", pg_url, "--broker", BROKER, env=FIXTURE)
        md = (tmp_path / "report" / "nightly.md").read_text()
        assert out.returncode == 1, out.stdout + out.stderr  # a label's job never ran
        assert f"| {served} |" in md and "| done |" in md
        assert f"| {unserved} |" in md and f"no worker took it (no worker listens on kwatch.{unserved})" in md
        assert f"{unserved} queued (no worker listens), {served} done" in out.stderr  # the wait's progress lines
        assert (tmp_path / "report" / served / "nightly.md").is_file()
    finally:
        import kombu

        from ci.fleet import queue_of

        with kombu.Connection(BROKER) as c:
            c.default_channel.queue_delete(queue_of(unserved))


def test_listeners_counts_the_workers_on_a_labels_queue():
    """RabbitMQ's consumer count: 0 for a queue nobody declared, 1 with one consumer, None without a broker or
    with one that cannot be reached (the nightly's wait then goes on by its timeout)."""
    import kombu

    from ci.fleet import listeners, queue_of

    label = f"listen-{uuid.uuid4().hex[:8]}"
    assert listeners(BROKER, label) == 0
    assert listeners(None, label) is None
    assert listeners("amqp://guest:guest@127.0.0.1:1//", label) is None
    with kombu.Connection(BROKER) as c:
        q = kombu.Queue(queue_of(label), channel=c.default_channel, auto_delete=True)
        q.declare()
        try:
            assert listeners(BROKER, label) == 0  # declared, nobody consuming
            with kombu.Consumer(c, [q], callbacks=[lambda body, msg: None]):
                assert listeners(BROKER, label) == 1
        finally:
            q.delete()
