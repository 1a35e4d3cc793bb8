"""Six `kwatch ingest` processes at once, on overlapping files, into a fresh PostgreSQL database:
the schema is migrated once under its advisory lock, every process exits 0 saying "stored" or
"already stored", and each run is stored exactly once."""
import os
import subprocess
import sys

from sqlalchemy import func, select

from db.engine import open_db
from db.models import Benchmark, Environment, Result, Run
from tests.conftest import ROOT
from tests.ingest_docs import doc, write

PROCS = 6


def test_concurrent_overlapping_ingests(pg_url, tmp_path):
    # Six runs sharing one environment and most benchmarks; process i ingests runs i, i+1, i+2.
    files = [str(write(doc(f"run{i}", cases=("m64n64k64", f"m{i}")), tmp_path / f"r{i}.json"))
             for i in range(PROCS)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, "-c", "from ci.cli import main; main()", "ingest", "--db", pg_url]
    procs = [subprocess.Popen(cmd + [files[(i + j) % PROCS] for j in range(3)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=env, cwd=tmp_path) for i in range(PROCS)]
    outs = [(p.wait(timeout=300), p.stderr.read()) for p in procs]
    for rc, err in outs:
        assert rc == 0, err[-3000:]
        assert err.count("stored") >= 3 and "Traceback" not in err
    said = "".join(err for _, err in outs)
    assert said.count("stored 8 results") == PROCS  # each run stored by exactly one process
    assert said.count("already stored") == 3 * PROCS - PROCS
    with open_db(pg_url)() as s:
        assert s.scalar(select(func.count()).select_from(Run)) == PROCS
        assert s.scalar(select(func.count()).select_from(Result)) == 8 * PROCS
        assert s.scalar(select(func.count()).select_from(Environment)) == 1
        assert s.scalar(select(func.count()).select_from(Benchmark)) == 2 * (1 + PROCS)
