"""No secret of the parent is readable by code under test: a planted implementation (`kwatch run`) and a
KernelBench solution (`kwatch grade`) look in every place a process can read (tests.fixtures.snoop.scan)
while the parent holds AWS_SECRET_ACCESS_KEY, GITHUB_TOKEN, PGPASSWORD, KWATCH_DB and a --db URL with a
password; they find none of them, and do find the canaries put where they are allowed to look."""
from __future__ import annotations

import json
import uuid

import pytest

from runners.sandbox import namespaced
from tests.conftest import ROOT, kwatch

needs_namespaces = pytest.mark.skipif(not namespaced(), reason="this host allows no user namespaces")


def test_the_parent_masks_its_environ_and_cmdline_in_place(tmp_path):
    """runners.hide_secrets in a real process: another process reads no secret in its /proc environ or
    cmdline, while the process itself and its libraries (libc getenv) still have them."""
    import subprocess
    import sys

    script = (
        "import ctypes, os, sys, time\n"
        "from runners.hide_secrets import hide_own_secrets\n"
        "assert hide_own_secrets()\n"
        "libc = ctypes.CDLL(None); libc.getenv.restype = ctypes.c_char_p\n"
        "print(os.environ['GITHUB_TOKEN'], libc.getenv(b'PGPASSWORD').decode(), sys.argv[2], flush=True)\n"
        "time.sleep(30)\n")
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "GITHUB_TOKEN": "KWSEC-gh", "PGPASSWORD": "KWSEC-pg",
           "KWATCH_DB": "postgresql://u:KWSEC-env@h/d", "LANG": "C.UTF-8"}
    p = subprocess.Popen([sys.executable, "-c", script, "--db", "postgresql://u:KWSEC p@w@h/d?sslpassword=KWSEC-q"],
                         env=env, stdout=subprocess.PIPE, text=True)
    try:
        seen = p.stdout.readline().split()
        assert seen == ["KWSEC-gh", "KWSEC-pg", "postgresql://u:KWSEC", "p@w@h/d?sslpassword=KWSEC-q"], seen
        environ = open(f"/proc/{p.pid}/environ", "rb").read()
        cmdline = open(f"/proc/{p.pid}/cmdline", "rb").read()
    finally:
        p.kill()
        p.wait()
    assert b"KWSEC" not in environ and b"KWSEC" not in cmdline, (environ, cmdline)
    assert b"GITHUB_TOKEN=********" in environ and b"postgresql://u:" in cmdline and b"@h/d" in cmdline


def _plant(tmp_path, pg_url):
    tag = uuid.uuid4().hex[:10]
    secrets = {name: f"KWSEC-{name.lower()}-{tag}" for name in ("AWS_SECRET_ACCESS_KEY", "GITHUB_TOKEN", "PGPASSWORD")}
    kwdb = f"KWSEC-kwatch_db-{tag}"
    argv = f"KWSEC-argv-{tag}"
    home = tmp_path / "home"
    home.mkdir()
    (home / ".pgpass").write_text(f"127.0.0.1:5432:*:postgres:KWSEC-canary-file-{tag}\n")
    env = {**secrets, "KWATCH_DB": pg_url.replace("postgres@", f"postgres:{kwdb}@"), "HOME": str(home),
           "KWATCH_JOB_ENV": "KWATCH_PROBE_OUT,KWATCH_PROBE_CANARY", "KWATCH_PROBE_OUT": str(tmp_path / "scans"),
           "KWATCH_PROBE_CANARY": f"KWSEC-canary-env-{tag}", "KWATCH_EXTRA_TECHNIQUES": "tests.fixtures.snoop"}
    planted = [*secrets.values(), kwdb, argv]
    return env, pg_url.replace("postgres@", f"postgres:{argv}@"), planted, tag


def _check(tmp_path, planted, tag, own_namespace=True):
    scans = [json.loads(p.read_text()) for p in (tmp_path / "scans").glob("scan-*.json")]
    assert scans, "the planted code did not run"
    for scan in scans:
        texts = {f["text"] for f in scan["found"]}
        leaked = [(f["place"], f["text"]) for f in scan["found"] if any(s in f["text"] for s in planted)
                  and (own_namespace or not f["place"].endswith("/mem"))]
        assert not leaked, leaked
        # it did look: its own environment and /proc/self, and the files of its home it may read
        assert f"KWSEC-canary-env-{tag}" in texts and f"KWSEC-canary-file-{tag}" in texts, scan["found"]
        if own_namespace:
            assert len(scan["pids"]) <= 3, scan["pids"]  # no process but its own
        else:
            assert len(scan["pids"]) > 3, scan["pids"]  # it saw the host's processes, its parent among them
    return scans


@pytest.mark.slow
@needs_namespaces
def test_kwatch_run_hides_every_parent_secret_from_the_code_under_test(tmp_path, pg_url):
    env, db, planted, tag = _plant(tmp_path, pg_url)
    p = kwatch("run", "--tier", "smoke", "-t", "snoop_gemm", "--device", "cpu", "--out", str(tmp_path / "r.json"),
               "--db", db, env=env, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    _check(tmp_path, planted, tag)


@pytest.mark.slow
def test_without_namespaces_the_parents_environ_and_cmdline_still_show_no_secret(tmp_path, pg_url):
    """KWATCH_NAMESPACES=0 (a host without user namespaces): the parent's /proc environ and cmdline are
    masked. Its memory is not checked here: this test runs as root, whose CAP_SYS_PTRACE reads it
    (a non-root parent is non-dumpable, so the same user cannot)."""
    env, db, planted, tag = _plant(tmp_path, pg_url)
    p = kwatch("run", "--tier", "smoke", "-t", "snoop_gemm", "--device", "cpu", "--out", str(tmp_path / "r.json"),
               "--db", db, env={**env, "KWATCH_NAMESPACES": "0"}, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    _check(tmp_path, planted, tag, own_namespace=False)


SOLUTION = '''
import torch
from tests.fixtures.snoop.scan import report_once

report_once()


class ModelNew(torch.nn.Module):
    def __init__(self, *args):
        super().__init__()
        from problem_module import Model
        self.inner = Model(*args)

    def forward(self, *xs):
        return self.inner(*xs)
'''


@pytest.mark.slow
@needs_namespaces
def test_kwatch_grade_hides_every_parent_secret_from_the_solution(tmp_path, pg_url):
    env, db, planted, tag = _plant(tmp_path, pg_url)
    problem = ROOT / "ci/kernelbench_examples/problems/2_row_softmax.py"
    (tmp_path / "problem_module.py").write_text(problem.read_text())
    sol = tmp_path / "snoop.py"
    sol.write_text(f"import sys\nsys.path.insert(0, {str(tmp_path)!r})\n" + SOLUTION)
    p = kwatch("grade", str(problem), str(sol), "--trials", "1", "--device", "cpu", "--db", db, env=env, timeout=600)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "fast_0.0 = 1.000" in p.stdout, p.stdout + p.stderr
    _check(tmp_path, planted, tag)
