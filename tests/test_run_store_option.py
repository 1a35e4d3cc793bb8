"""`kwatch run` and `python -m runners run` are one run loop; storing in the database is an option."""
from __future__ import annotations

import subprocess
import sys

from db.engine import open_db
from db.models import Run
from tests.conftest import ROOT, kwatch

PICK = ["--tier", "smoke", "-t", "gemm_fp32_emulation", "-i", "cublas_fp32", "-c", "m64n64k64", "--device", "cpu"]


def test_repeat_writes_and_stores_every_run(tmp_path):
    db = f"sqlite:///{tmp_path / 'kw.db'}"
    proc = kwatch("run", *PICK, "--repeat", "2", "--out", str(tmp_path / "rep.json"), "--db", db)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (tmp_path / "rep_01.json").exists() and (tmp_path / "rep_02.json").exists()
    with open_db(db)() as session:
        assert session.query(Run).count() == 2


def test_runners_entry_point_writes_without_a_database(tmp_path):
    out = tmp_path / "one.json"
    proc = subprocess.run([sys.executable, "-m", "runners", "run", *PICK, "--out", str(out)], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert out.exists() and "stored" not in proc.stdout + proc.stderr
