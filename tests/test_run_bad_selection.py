"""A run whose selection names nothing real is refused before any result file is written."""
import subprocess
import sys

import pytest

from tests.conftest import ROOT


def runner(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "runners", "run", *args], capture_output=True, text=True,
                          cwd=ROOT, timeout=300)


@pytest.mark.parametrize("selection, message", [
    (["-t", "no_such_technique"], "unknown technique"),
    (["-t", "exp_approx", "-c", "no_such_case"], "unknown case"),
    (["-t", "exp_approx", "-i", "no_such_impl"], "unknown implementation"),
])
def test_bad_selection_is_refused_and_leaves_no_file(tmp_path, selection, message):
    out = tmp_path / "run.json.gz"
    proc = runner(*selection, "--device", "cpu", "--out", str(out))
    assert proc.returncode == 2, proc.stderr
    assert message in proc.stderr
    assert not out.exists()


def test_case_outside_the_tier_is_refused(tmp_path):
    out = tmp_path / "run.json"
    proc = runner("-t", "exp_approx", "-c", "elem_n16m", "--tier", "smoke", "--device", "cpu", "--out", str(out))
    assert proc.returncode == 2, proc.stderr
    assert "matches no case of tier 'smoke'" in proc.stderr
    assert not out.exists()
