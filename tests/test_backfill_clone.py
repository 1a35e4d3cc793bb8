"""`kwatch backfill` run in another clone measures that clone's commits, not the installed checkout's."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest
from sqlalchemy import select

from tests.conftest import ROOT


def _git(*args, cwd):
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


def test_backfill_outside_a_repository_is_one_line_and_exit_2(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    p = subprocess.run([sys.executable, "-P", "-c", "from ci.cli import main; main()", "backfill", "HEAD~1..HEAD",
                        "--db", f"sqlite:///{tmp_path / 'kw.db'}"], cwd=tmp_path, env=env, capture_output=True,
                       text=True, timeout=120)
    out = p.stdout + p.stderr
    assert p.returncode == 2 and "not a git repository" in out and "Traceback" not in out, out
    assert len(out.strip().splitlines()) <= 3, out


@pytest.mark.slow
def test_backfill_from_a_clone_measures_the_clones_regression_commit(tmp_path):
    from db.engine import open_db
    from db.models import Result, Run

    clone = tmp_path / "clone"
    _git("clone", "-q", "--depth", "2", f"file://{ROOT}", str(clone), cwd=tmp_path)
    impl = clone / "suite" / "techniques" / "exp_approx" / "torch_eager.py"
    impl.write_text(impl.read_text().replace('    if kind == "softmax":',
                                             '    __import__("time").sleep(0.03)  # the regression\n'
                                             '    if kind == "softmax":', 1))
    _git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-am", "exp_approx: slower", cwd=clone)
    base, head = _git("rev-parse", "HEAD~1", "HEAD", cwd=clone).split()
    assert subprocess.run(["git", "cat-file", "-e", f"{head}^{{commit}}"], cwd=ROOT).returncode != 0
    db = f"sqlite:///{tmp_path / 'kw.db'}"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}  # the installed KernelWatch, run from the clone (-P: not its code)
    p = subprocess.run([sys.executable, "-P", "-c", "from ci.cli import main; main()", "backfill", "HEAD~1..HEAD",
                        "-t", "exp_approx", "-i", "torch_eager", "-c", "elem_n4k", "--device", "cpu",
                        "--out-dir", str(tmp_path / "out"), "--db", db],
                       cwd=clone, env=env, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0 and "1 measured" in p.stdout, p.stdout + p.stderr[-2000:]
    with open_db(db)() as s:
        runs = {r.git_commit: r.id for r in s.scalars(select(Run).where(Run.reason == "backfill"))}
        assert set(runs) == {head}, runs  # HEAD~1..HEAD is the clone's one new commit
        lat = s.scalars(select(Result.value).where(Result.run_id == runs[head], Result.metric == "latency_ms")).all()
    assert lat and min(lat) > 25.0, lat  # the clone's regression was measured (the sleep of 30 ms)
    p = subprocess.run([sys.executable, "-P", "-c", "from ci.cli import main; main()", "backfill", f"{base}^!",
                        "-t", "exp_approx", "-i", "torch_eager", "-c", "elem_n4k", "--device", "cpu",
                        "--out-dir", str(tmp_path / "out"), "--db", db],
                       cwd=clone, env=env, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0 and "1 measured" in p.stdout, p.stdout + p.stderr[-2000:]
    with open_db(db)() as s:
        before = s.scalars(select(Result.value).join(Run, Run.id == Result.run_id)
                           .where(Run.git_commit == base, Result.metric == "latency_ms")).all()
    assert before and max(before) < 10.0, before  # the commit before it is fast
