"""The job queue: concurrent runners never claim the same job (PostgreSQL SKIP LOCKED; SQLite too)."""
import threading

from db.engine import open_db
from ci.nightly_queue import claim, enqueue, finish
from tests.conftest import kwatch


def test_concurrent_claims_take_distinct_jobs(db_url):
    factory = open_db(db_url)
    with factory() as s, s.begin():
        ids = [enqueue(s, "nightly", {"tier": "nightly", "techniques": [f"t{i}"]}, "h200" if i % 2 else None)
               for i in range(12)]
    got, errors = [], []
    barrier = threading.Barrier(4)

    def runner(name):
        try:
            barrier.wait()
            while True:
                with factory() as s, s.begin():
                    job = claim(s, name, ["h200"])
                    if job is None:
                        return
                    got.append((job.id, name))
                    finish(s, job.id, True, run_id=f"run-{job.id}")
        except Exception as exc:  # SQLite may report "database is locked" under contention
            errors.append(exc)

    threads = [threading.Thread(target=runner, args=(f"w{i}",)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    claimed = [j for j, _ in got]
    assert len(claimed) == len(set(claimed))  # no job twice
    if db_url.startswith("postgresql"):
        assert not errors and sorted(claimed) == sorted(ids)


def test_labels_route_jobs_and_cli_lists_them(sqlite_url):
    factory = open_db(sqlite_url)
    with factory() as s, s.begin():
        enqueue(s, "nightly", {"tier": "nightly", "techniques": []}, "a100")
    with factory() as s, s.begin():
        assert claim(s, "h200-host", ["h200"]) is None  # not for this runner
        assert claim(s, "a100-host", ["a100"]).claimed_by == "a100-host"
    assert kwatch("queue", "add", "--label", "h200", "-t", "gemm_fp32_emulation", "--db", sqlite_url).returncode == 0
    p = kwatch("queue", "list", "--db", sqlite_url)
    assert p.returncode == 0 and "queued" in p.stdout and "running" in p.stdout
