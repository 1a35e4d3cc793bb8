"""CI runs every technique and every implementation: the smoke_full tier on this CPU, one
technique per test (each run stays under the per-test timeout)."""
from __future__ import annotations

import json

import pytest

from runners.resultfile import read_text
from suite.registry import techniques
from tests.conftest import kwatch


@pytest.mark.parametrize("name", sorted(techniques()))
def test_every_implementation_runs_its_smoke_cases(name, tmp_path):
    tech = techniques()[name]
    assert tech.cases_for("smoke_full"), f"{name} has no smoke case"
    out = tmp_path / "smoke_full.json.gz"
    proc = kwatch("run", "--tier", "smoke_full", "-t", name, "--no-db", "--out", str(out), "--device", "cpu")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    seen: dict[str, set] = {}
    for r in json.loads(read_text(out))["results"]:
        seen.setdefault(r["impl"], set()).add(r["status"])
    for impl in tech.impls:
        statuses = seen.get(impl.name, set())
        if "cuda" in impl.requires:  # GPU-only: recorded as skipped on a CPU, never silently absent
            assert statuses == {"skipped"}, (impl.name, statuses)
        elif impl.expect_failure:
            assert statuses and statuses <= {"ok", "failed_correctness"}, (impl.name, statuses)
        else:  # failed_correctness here can only be a probe point (the exit code covers the rest)
            assert "ok" in statuses and not statuses & {"error", "skipped"}, (impl.name, statuses)


def test_dense_attention_runs_on_the_cpu(tmp_path):
    """attention_dense's baseline family runs in CI through SDPA's math backend."""
    out = tmp_path / "dense.json"
    proc = kwatch("run", "--tier", "smoke", "-t", "attention_dense", "-i", "sdpa_math", "--no-db",
                  "--out", str(out), "--device", "cpu")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    rows = json.loads(out.read_text())["results"]
    assert {r["metric"] for r in rows if r["status"] == "ok"} >= {"latency_ms", "rel_err"}
