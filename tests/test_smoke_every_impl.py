"""CI runs every technique and every implementation: the smoke_full tier on this CPU, one
technique per test (each run stays under the per-test timeout)."""
from __future__ import annotations

import json

import pytest

from runners.resultfile import read_text
from suite.registry import techniques
from tests.conftest import kwatch


# decode_step's interpreted Triton kernels take 350-460 s together on this CPU: three tests of about a
# third each, so the two test processes share them (a test per implementation would add ~10 s of process
# start to each); implementations not named here go to the last group
SPLIT = {"decode_step": (("triton_dataflow", "triton_fused"),
                         ("triton_persistent", "triton_fused_mma", "triton_fused_pdl"))}


def _sets() -> list:
    out = []
    for name in sorted(techniques()):
        groups = SPLIT.get(name)
        if not groups:
            out.append(pytest.param(name, (), id=name))
            continue
        named = {i for g in groups for i in g}
        rest = tuple(i.name for i in techniques()[name].impls if i.name not in named)
        out += [pytest.param(name, g, id=f"{name}:{k + 1}") for k, g in enumerate((*groups, rest))]
    return out


@pytest.mark.parametrize("name,impl_names", _sets())
def test_every_implementation_runs_its_smoke_cases(name, impl_names, tmp_path):
    tech = techniques()[name]
    assert tech.cases_for("smoke_full"), f"{name} has no smoke case"
    out = tmp_path / "smoke_full.json.gz"
    only = [a for i in impl_names for a in ("-i", i)]
    proc = kwatch("run", "--tier", "smoke_full", "-t", name, *only, "--no-db", "--out", str(out), "--device", "cpu")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    seen: dict[str, set] = {}
    for r in json.loads(read_text(out))["results"]:
        seen.setdefault(r["impl"], set()).add(r["status"])
    wanted = [i for i in tech.impls if not impl_names or i.name in impl_names]
    assert set(seen) == {i.name for i in wanted}, sorted(seen)
    for impl in wanted:
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
