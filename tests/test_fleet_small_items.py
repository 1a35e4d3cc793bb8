"""The smaller items of the exactly-once review: a pytest-benchmark import is a finished run, a refusal
advises what is accepted and quotes no 5,000-character name, a database URL of another kind or with a
non-numeric port is one line and exit 2, and Ctrl-C of a run keeps and stores its finished jobs."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest
from sqlalchemy import func, select

from tests.conftest import ROOT, kwatch
from tests.ingest_docs import doc, write
from tests.test_interop_pytest_benchmark import bench_file  # noqa: F401  (a real pytest-benchmark file)


def test_a_pytest_benchmark_import_is_not_labelled_incomplete(bench_file, tmp_path):  # noqa: F811
    from db.engine import open_db
    from db.models import Run

    db = f"sqlite:///{tmp_path / 'kw.db'}"
    p = kwatch("ingest", str(bench_file[0]), "--db", db)
    assert p.returncode == 0 and "stored 3 results" in p.stderr and "INCOMPLETE" not in p.stderr, p.stderr
    with open_db(db)() as s:
        (run,) = s.scalars(select(Run)).all()
        assert run.finished_at is not None and run.finished_at == run.started_at


def test_nan_refusals_advise_what_is_accepted(tmp_path):
    from db.engine import open_db
    from db.ingest import ingest_files
    from db.validate import ResultFileError

    factory = open_db(f"sqlite:///{tmp_path / 'kw.db'}")
    d = doc("nan-value")
    d["results"][0]["value"] = float("nan")
    with pytest.raises(ResultFileError) as exc:
        ingest_files(factory, [str(write(d, tmp_path / "a.json"))])
    assert "results[0].value" in str(exc.value) and "null with a status other than ok" in str(exc.value)
    d["results"][0]["value"], d["results"][0]["status"], d["results"][0]["error"] = None, "error", "no value"
    [o] = ingest_files(factory, [str(write(d, tmp_path / "b.json"))])  # the advice, followed, is accepted
    assert o.stored
    d = doc("nan-sample")
    d["results"][0]["samples"][0] = float("nan")
    with pytest.raises(ResultFileError, match=r"samples\[0\]: is NaN \(write null for a missing value\)"):
        ingest_files(factory, [str(write(d, tmp_path / "c.json"))])
    d["results"][0]["samples"][0] = None
    [o] = ingest_files(factory, [str(write(d, tmp_path / "d.json"))])
    assert o.stored


def test_a_refusal_quotes_a_long_name_shortened(tmp_path):
    d = doc("long-name")
    d["results"][0]["technique"] = "t" * 5000
    p = kwatch("ingest", str(write(d, tmp_path / "a.json")), "--db", f"sqlite:///{tmp_path / 'kw.db'}")
    assert p.returncode == 2 and "results[0].technique" in p.stderr, p.stderr
    assert "t" * 121 not in p.stderr and "(5002 characters)" in p.stderr and len(p.stderr) < 600, p.stderr
    p = kwatch("run", "--tier", "smoke", "-t", "x" * 5000, "--no-db")
    assert p.returncode == 2 and "x" * 121 not in p.stderr and len(p.stderr) < 2000, p.stderr[:3000]


@pytest.mark.parametrize("url, says", [
    ("mysql://kw:hunter22@db/kw", "mysql://kw:***@db/kw: unknown database kind 'mysql'; KernelWatch stores into SQLite"),
    ("postgresql://kw:hunter22@db:abc/kw", "postgresql://kw:***@db:abc/kw: its port is not a number"),
])
def test_an_unusable_database_url_is_one_line_and_exit_2(tmp_path, url, says):
    f = write(doc("url-run"), tmp_path / "a.json")
    for args in (["ingest", str(f)], ["db", "upgrade"], ["gate", "--baseline", str(f), "--candidate", "main"]):
        p = kwatch(*args, "--db", url)
        out = " ".join((p.stdout + p.stderr).split())  # the gate's console wraps its line
        assert p.returncode == 2 and says in out and "hunter22" not in out and "Traceback" not in out, (args, out)


@pytest.mark.slow
def test_ctrl_c_of_a_run_keeps_and_stores_the_finished_jobs_as_incomplete(tmp_path):
    from db.engine import open_db
    from db.models import Result, Run

    db, out = f"sqlite:///{tmp_path / 'kw.db'}", tmp_path / "run.json"
    err = open(tmp_path / "stderr.txt", "w")
    p = subprocess.Popen([sys.executable, "-c", "from ci.cli import main; main()", "run", "--tier", "smoke",
                          "-t", "fleet_gemm", "-i", "quick", "-i", "long", "--device", "cpu", "--out", str(out),
                          "--db", db], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=err, start_new_session=True,
                         env={**os.environ, "KWATCH_EXTRA_TECHNIQUES": "tests.fixtures.fleet"},
                         # as from a terminal: a test run started in the background inherits SIGINT ignored
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    def finished() -> int:  # the file is rewritten after each job
        try:
            return len(json.loads(out.read_text())["results"])
        except (OSError, ValueError):
            return 0

    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and finished() < 2:
        time.sleep(0.2)
    assert finished() == 2  # the quick job finished; the long one (about 12 s) is running
    time.sleep(1.0)
    os.killpg(p.pid, signal.SIGINT)  # what Ctrl-C in a terminal does: the whole foreground group
    assert p.wait(timeout=60) == 130
    text = (tmp_path / "stderr.txt").read_text()
    assert f"the 2 results of the jobs that finished are in {out}" in text, text[-2000:]
    assert "stored as an incomplete run in sqlite:///" in text, text[-2000:]
    with open_db(db)() as s:
        (run,) = s.scalars(select(Run)).all()
        assert run.finished_at is None and run.id == json.loads(out.read_text())["run"]["id"]
        assert s.scalar(select(func.count()).select_from(Result).where(Result.run_id == run.id)) == 2
