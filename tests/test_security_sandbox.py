"""Code under test gets a minimal environment and a memory limit: a real worker running hostile
implementations (tests.fixtures.hostile), and `kwatch grade` on a solution that looks for secrets."""
from __future__ import annotations

import os

import pytest

from runners.run import RunOptions, execute
from runners.sandbox import job_env, rss_bytes
from runners.timing import Protocol
from tests.conftest import ROOT, kwatch

FAST = Protocol(target_rel_spread=0.5, max_time_s=0.05, min_reps=2, warmup_reps=1)
SECRETS = {"KWATCH_DB": "postgresql://kw:hunter2@db/kw", "GITHUB_TOKEN": "ghp_x", "HOSTILE_API_TOKEN": "t",
           "AWS_SECRET_ACCESS_KEY": "k", "PGPASSWORD": "hunter2"}


def test_job_env_keeps_what_a_kernel_needs_and_no_secret():
    parent = {**SECRETS, "PATH": "/usr/bin", "HOME": "/home/u", "CUDA_VISIBLE_DEVICES": "1",
              "TRITON_CACHE_DIR": "/c/triton", "XDG_CACHE_HOME": "/c", "TORCH_HOME": "/c/torch",
              "LD_LIBRARY_PATH": "/usr/local/cuda/lib64", "CUDA_API_TOKEN": "no", "TRITON_AUTH_KEY": "no",
              "KWATCH_EXTRA_TECHNIQUES": "m", "DATABASE_URL": "postgresql://a:b@c/d", "SSH_AUTH_SOCK": "/s",
              "MY_FLAG": "1", "OTHER": "2", "KWATCH_JOB_ENV": "MY_FLAG,GITHUB_TOKEN"}
    env = job_env(parent, PYTHONPATH="/repo")
    assert env == {"PATH": "/usr/bin", "HOME": "/home/u", "CUDA_VISIBLE_DEVICES": "1",
                   "TRITON_CACHE_DIR": "/c/triton", "XDG_CACHE_HOME": "/c", "TORCH_HOME": "/c/torch",
                   "LD_LIBRARY_PATH": "/usr/local/cuda/lib64", "KWATCH_EXTRA_TECHNIQUES": "m",
                   "MY_FLAG": "1", "PYTHONPATH": "/repo"}  # a named secret is still not passed


@pytest.fixture(scope="module")
def hostile_rows(tmp_path_factory):
    """The hostile technique run by the real worker with secrets in the parent's environment and a
    1.5 GiB memory limit."""
    saved = {k: os.environ.get(k) for k in [*SECRETS, "KWATCH_EXTRA_TECHNIQUES"]}
    os.environ.update(SECRETS, KWATCH_EXTRA_TECHNIQUES="tests.fixtures.hostile")
    try:
        rf = execute(RunOptions(tier="smoke", techniques=["hostile_gemm"], device="cpu", timeout_s=120,
                                memory_gb=1.5, protocol=FAST), tmp_path_factory.mktemp("hostile") / "run.json")
    finally:
        for k, v in saved.items():
            os.environ.pop(k, None) if v is None else os.environ.__setitem__(k, v)
    rows = {(r["impl"], r["metric"]): r for r in rf.results}
    rows["config"] = rf.doc["run"]["config"]
    return rows


def test_code_under_test_sees_no_database_url_or_token(hostile_rows):
    row = hostile_rows[("env_snoop", "rel_err")]
    assert row["status"] == "ok", row["error"]  # it raised had it seen any of them
    assert row["value"] < 1e-5


def test_the_run_records_whether_code_under_test_had_namespaces_of_its_own(hostile_rows):
    from runners.sandbox import namespaced

    assert hostile_rows["config"]["sandbox"] == {"namespaces": namespaced()}


def test_a_memory_hog_is_stopped_and_the_run_goes_on(hostile_rows):
    row = hostile_rows[("memory_hog", "latency_ms")]
    assert row["status"] == "error"
    assert "memory limit" in row["error"] and "> 1.50 GiB (killed)" in row["error"], row["error"]
    assert row["stats"]["job_s"] < 60
    assert hostile_rows[("good", "rel_err")]["status"] == "ok"  # a new worker took the next job


def test_rss_of_this_process_is_read():
    assert 10 << 20 < rss_bytes(os.getpid()) < 64 << 30


SNOOPING_SOLUTION = '''
import os
import torch

SEEN = [k for k in ("KWATCH_DB", "GITHUB_TOKEN", "PGPASSWORD") if k in os.environ]


class ModelNew(torch.nn.Module):
    def __init__(self, *args):
        super().__init__()
        if SEEN:
            raise RuntimeError("solution saw " + ", ".join(SEEN))
        from problem_module import Model
        self.inner = Model(*args)

    def forward(self, *xs):
        return self.inner(*xs)
'''


def test_grade_runs_a_solution_without_secrets_and_under_a_memory_limit(tmp_path):
    problem = ROOT / "ci/kernelbench_examples/problems/2_row_softmax.py"
    (tmp_path / "problem_module.py").write_text(problem.read_text())
    sol = tmp_path / "snoop.py"
    sol.write_text(f"import sys\nsys.path.insert(0, {str(tmp_path)!r})\n" + SNOOPING_SOLUTION)
    env = {**SECRETS, "KWATCH_DB": f"sqlite:///{tmp_path / 'kw.db'}"}
    p = kwatch("grade", str(problem), str(sol), "--trials", "1", "--device", "cpu", "--no-db", env=env, timeout=600)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "fast_0.0 = 1.000" in p.stdout, p.stdout + p.stderr  # correct: it saw none of the secrets
    hog = tmp_path / "hog.py"
    hog.write_text(sol.read_text() + "\nHELD = [b'\\x01' * (32 << 20) for _ in range(128)]\n")
    p = kwatch("grade", str(problem), str(hog), "--trials", "1", "--device", "cpu", "--no-db",
               "--memory-limit", "1.5", env=env, timeout=600)
    assert "memory limit" in p.stdout and "fast_0.0 = 0.000" in p.stdout, p.stdout + p.stderr
