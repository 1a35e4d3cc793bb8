"""The decode step's sweep as a dry run on the CPU (interpreter, tiny shape): a named set runs, its rows are
checked against the eager step, and the file records the set and the commit it was run at."""
import json
import os
import sys

os.environ.setdefault("TRITON_INTERPRET", "1")

import pytest  # noqa: E402

from suite.techniques.decode_step import TINY  # noqa: E402
from runners.studies import decode_step_sweep as sweep  # noqa: E402
from suite.techniques.decode_step.sweep_sets import SETS  # noqa: E402


@pytest.mark.parametrize("name", ["omerge", "tile8k"])
def test_a_named_set_dry_runs_and_records_its_set_and_commit(name, tmp_path, monkeypatch):
    out = tmp_path / "sweep.json"
    monkeypatch.setenv("KWATCH_GIT_COMMIT", "0123abc")
    monkeypatch.setattr(sys, "argv", ["sweep", "--device", "cpu", "--params", json.dumps(TINY), "--kv", "48",
                                      f"--{name}", "--budget-s", "10", "--out", str(out)])
    sweep.main()
    doc = json.loads(out.read_text())
    assert doc["commit"] == "0123abc" and doc["set"] == name and doc["device"] == "cpu"
    first = doc["rows"][0]
    assert first["config"] == json.loads(json.dumps(SETS[name][0][0]))  # the set's first configuration
    assert first["rel_diff_vs_eager_bf16"] < 0.05 and first["median_ms"] > 0
