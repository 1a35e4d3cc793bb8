"""CI runs every technique and every implementation: the smoke_full tier on this CPU, once."""
from __future__ import annotations

import json
from collections import defaultdict

from runners.resultfile import read_text
from suite.registry import techniques
from tests.conftest import kwatch


def test_every_implementation_of_every_technique_runs_its_smoke_cases(tmp_path):
    out = tmp_path / "smoke_full.json.gz"
    proc = kwatch("run", "--tier", "smoke_full", "--no-db", "--out", str(out), "--device", "cpu")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    rows = json.loads(read_text(out))["results"]
    seen = defaultdict(set)
    for r in rows:
        seen[(r["technique"], r["impl"])].add(r["status"])
    for name, tech in techniques().items():
        assert tech.cases_for("smoke_full"), f"{name} has no smoke case"
        for impl in tech.impls:
            statuses = seen[(name, impl.name)]
            if "cuda" in impl.requires:  # GPU-only: recorded as skipped on a CPU, never silently absent
                assert statuses == {"skipped"}, (name, impl.name, statuses)
            elif impl.expect_failure:
                assert statuses <= {"ok", "failed_correctness"} and statuses, (name, impl.name, statuses)
            else:
                assert "ok" in statuses and not statuses & {"error", "skipped"}, (name, impl.name, statuses)
    # The dense-attention baseline runs on the CPU too (SDPA's math backend).
    dense = [r for r in rows if r["technique"] == "attention_dense" and r["impl"] == "sdpa_math"]
    assert {r["metric"] for r in dense if r["status"] == "ok"} >= {"latency_ms", "rel_err"}
