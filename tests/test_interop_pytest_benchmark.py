"""kwatch ingest accepts a JSON file written by pytest-benchmark itself, keeping its stats and metadata."""
import json
import os
import subprocess
import sys

import pytest
from sqlalchemy import select

from tests.conftest import kwatch

BENCH = '''
import pytest

@pytest.mark.parametrize("n", [100, 2000])
def test_sort(benchmark, n):
    benchmark(sorted, list(range(n, 0, -1)))

@pytest.mark.benchmark(group="hashing")
def test_hash(benchmark):
    benchmark(hash, "abc" * 100)
'''


def _git(cwd, *args):
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


@pytest.fixture(scope="module")
def bench_file(tmp_path_factory):
    """(path to pytest-benchmark JSON with raw data, the same without raw data)."""
    d = tmp_path_factory.mktemp("pbproj")
    (d / "test_tiny.py").write_text(BENCH)
    _git(d, "init", "-q")
    _git(d, "-c", "user.email=t@example.com", "-c", "user.name=t", "add", "test_tiny.py")
    _git(d, "-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-qm", "tiny")
    # pytest-benchmark turns itself off inside an xdist worker (it reads PYTEST_XDIST_WORKER): the inner run
    # is a plain one, so it gets an environment without the outer run's xdist variables.
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_XDIST")}
    outs = []
    for name, extra in (("with_data.json", ["--benchmark-save-data"]), ("stats_only.json", [])):
        p = subprocess.run([sys.executable, "-m", "pytest", "test_tiny.py", "-q", "-p", "no:cacheprovider",
                            f"--benchmark-json={d / name}", "--benchmark-max-time=0.02",
                            "--benchmark-min-rounds=15", *extra], cwd=d, capture_output=True, text=True, timeout=300, env=env)
        assert p.returncode == 0, p.stdout + p.stderr
        assert (d / name).is_file(), f"pytest-benchmark wrote no {name}:\n{p.stdout}{p.stderr}"
        outs.append(d / name)
    return outs


def test_ingest_maps_pytest_benchmark_faithfully(bench_file, db_url):
    with_data, stats_only = bench_file
    raw = json.loads(with_data.read_text())
    p = kwatch("ingest", str(with_data), str(stats_only), "--db", db_url)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "stored 3 results" in p.stderr
    again = kwatch("ingest", str(with_data), "--db", db_url)
    assert again.returncode == 0 and "already stored" in again.stderr

    from db.engine import open_db
    from db.models import Benchmark, Result, Run

    with open_db(db_url)() as s:
        runs = s.scalars(select(Run).order_by(Run.id)).all()
        assert len(runs) == 2 and {r.source for r in runs} == {"pytest-benchmark"}
        rows = s.execute(select(Result, Benchmark, Run).join(Benchmark, Result.benchmark_id == Benchmark.id)
                         .join(Run, Result.run_id == Run.id)).all()
        env_raw = {r.id: r.environment.raw for r in runs}
    by_name = {}
    for res, b, run in rows:
        if run.config["imported_from"] == str(with_data):
            by_name[(b.technique, b.impl, b.case_id)] = (res, run)
    assert set(by_name) == {("test_tiny", "test_sort", "100"), ("test_tiny", "test_sort", "2000"),
                            ("hashing", "test_hash", "default")}
    for bench in raw["benchmarks"]:
        key = ("hashing" if bench["group"] else "test_tiny", bench["name"].split("[")[0], bench["param"] or "default")
        res, run = by_name[key]
        st = bench["stats"]
        assert res.metric == "latency_ms" and res.unit == "ms" and res.direction == "lower"
        assert res.value == pytest.approx(st["median"] * 1e3)
        assert res.stats["min"] == pytest.approx(st["min"] * 1e3) and res.stats["n"] == st["rounds"]
        assert res.stats["pytest_benchmark"]["stats"]["ops"] == st["ops"]
        assert res.stats["pytest_benchmark"]["stats"]["iterations"] == st["iterations"]
        assert len(res.samples) == st["rounds"] == len(st["data"])
        assert res.samples[0] == pytest.approx(st["data"][0] * 1e3)
        assert res.protocol == "pytest-benchmark/perf_counter"
        assert res.params == (bench["params"] or {})
    assert run.git_commit == raw["commit_info"]["id"] and len(run.git_commit) == 40
    assert run.config["commit_info"] == raw["commit_info"]
    assert env_raw[run.id]["machine_info"] == raw["machine_info"]


def test_gate_compares_pytest_benchmark_files(bench_file, tmp_path):
    with_data, _ = bench_file
    p = kwatch("gate", "--baseline", str(with_data), "--candidate", str(with_data),
               "--db", f"sqlite:///{tmp_path / 'none.db'}", "--json", str(tmp_path / "g.json"))
    assert p.returncode == 0, p.stdout + p.stderr
    report = json.loads((tmp_path / "g.json").read_text())
    assert report["counts"] == {"stable": 3}
