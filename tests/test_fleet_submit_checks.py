"""`kwatch submit` refuses what no worker could run, in one line with exit 2, and leaves no job queued."""
from __future__ import annotations

import pytest

from tests.conftest import kwatch


def _jobs(db):
    from ci.fleet import jobs

    return jobs(db, limit=100)


@pytest.mark.parametrize("args, says", [
    (["--tier", "nightlyy"], "unknown tier 'nightlyy'; known: smoke, smoke_full, nightly, full"),
    (["-t", "no_such_technique"], "no_such_technique"),
    (["--broker", "redis://127.0.0.1:6379/0"], "only RabbitMQ is supported"),
    (["--broker", "redis://u:hunter22@127.0.0.1:6379/0"], "redis://u:***@127.0.0.1:6379/0"),
])
def test_submit_refuses_in_one_line_and_queues_nothing(tmp_path, args, says):
    db = f"sqlite:///{tmp_path / 'kw.db'}"
    p = kwatch("submit", "--label", "h200", "--tier", "smoke", *args, "--db", db,
               env={"KWATCH_BROKER": "amqp://guest:guest@127.0.0.1:5672//"})
    out = p.stdout + p.stderr
    assert p.returncode == 2 and says in out and len(out.strip().splitlines()) == 1, out
    assert "Traceback" not in out and "hunter22" not in out
    assert not (tmp_path / "kw.db").exists() or _jobs(db) == []


def test_a_submit_to_an_unreachable_broker_leaves_the_job_failed_not_queued(tmp_path):
    db = f"sqlite:///{tmp_path / 'kw.db'}"
    p = kwatch("submit", "--label", "h200", "--tier", "smoke", "-t", "gemm_fp32_emulation", "--db", db,
               "--broker", "amqp://guest:guest@127.0.0.1:1//", timeout=120)
    out = p.stdout + p.stderr
    assert p.returncode == 2 and "unreachable" in out and "not queued (marked failed)" in out, out
    assert len(out.strip().splitlines()) == 1 and "guest:guest" not in out, out
    (job,) = _jobs(db)
    assert job.status == "failed" and "unreachable" in job.error and job.finished_at is not None
