"""The tier map names tests that exist, keeps a fast test in every file, and README, .ci/run and the CI
workflow run the same fast tier first."""
from __future__ import annotations

import ast
import re
import subprocess
import sys

import yaml

from tests import tiers
from tests.conftest import ROOT

FAST = 'python -m pytest -m "not slow and not browser" -n 2'


def _functions(path) -> set[str]:
    """Names of the test functions (and Class::method) a test file defines."""
    tree = ast.parse(path.read_text())
    names = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    for cls in (n for n in tree.body if isinstance(n, ast.ClassDef)):
        names |= {f"{cls.name}::{m.name}" for m in cls.body if isinstance(m, ast.FunctionDef)}
    return {n for n in names if n.split("::")[-1].startswith("test")}


def test_every_entry_names_a_test_file_and_function():
    for table in (tiers.SLOW, tiers.BROWSER, tiers.GPU, tiers.KEEP_FAST):
        for key in table:
            file, _, func = key.partition("::")
            path = ROOT / file
            assert path.is_file(), key
            assert not func or func.split("[")[0] in _functions(path), key


def test_every_test_file_keeps_a_test_in_the_fast_tier():
    """A file whose every test is slow would leave its module out of README's test command: the map
    names functions (never a whole file), and each file keeps one function or parameter set fast, or names
    the file whose fast tests cover its module."""
    assert all("::" in key for key in tiers.SLOW)

    def has_fast(rel: str) -> bool:
        funcs = {f"{rel}::{f}" for f in _functions(ROOT / rel)}
        return bool(funcs - set(tiers.SLOW) - set(tiers.BROWSER)) or any(
            k.startswith(rel + "::") for k in tiers.KEEP_FAST)

    for path in sorted((ROOT / "tests").glob("test_*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel in tiers.COVERED_BY:
            assert not has_fast(rel) and has_fast(tiers.COVERED_BY[rel]), rel
        else:
            assert has_fast(rel) or rel in tiers.GPU, f"{rel}: no test left in the fast tier"


def test_marks_follow_the_map_ids_and_fixtures():
    key = next(iter(tiers.SLOW))
    assert "slow" in tiers.marks_for(key + "[x]", (), {})
    assert tiers.marks_for("tests/test_none.py::test_a", ("driver", "tmp_path"), {}) == {"browser"}
    assert tiers.marks_for("tests/test_none.py::test_a[postgresql]", ("db_url",), {"db_url": "postgresql"}) \
        == {"postgres"}
    assert tiers.marks_for("tests/test_none.py::test_a[sqlite]", ("db_url",), {"db_url": "sqlite"}) == set()
    kept = next(iter(tiers.KEEP_FAST))
    assert "slow" not in tiers.marks_for(kept, (), {})


def test_the_fast_tier_leaves_out_the_mapped_tests():
    """Collected through pytest itself: the conftest hook applies the map."""
    key = next(k for k in tiers.SLOW if "::" in k)
    file = key.split("::")[0]
    args = [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", file]
    fast = subprocess.run(args + ["-m", "not slow and not browser"], capture_output=True, text=True, cwd=ROOT)
    slow = subprocess.run(args + ["-m", "slow"], capture_output=True, text=True, cwd=ROOT)
    assert fast.returncode == 0 and slow.returncode == 0, fast.stdout[-2000:] + slow.stdout[-2000:]
    assert key not in fast.stdout and key in slow.stdout


def test_readme_ci_script_and_workflow_run_the_fast_tier_first():
    readme = (ROOT / "README.md").read_text().splitlines()
    assert any(line.rstrip().endswith(FAST) for line in readme[:12]), "README's test command"
    script = (ROOT / ".ci" / "run").read_text()
    runs = re.findall(r"^\s*(?:\S.*&& )?(python -m pytest.*)$", script, re.M)
    assert runs and runs[0] == FAST, runs
    assert any("-m slow" in r or '-m "slow' in r for r in runs) and any("browser" in r for r in runs[1:])
    steps = yaml.safe_load((ROOT / ".github" / "workflows" / "ci.yml").read_text())["jobs"]["tests"]
    assert steps["timeout-minutes"] <= 45
    assert any(".ci/run" in s.get("run", "") for s in steps["steps"])
