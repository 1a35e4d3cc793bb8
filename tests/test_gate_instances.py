"""A timing difference between two input instances blocks only where the kernel's time does not depend on
the data: the tile-skip GEMM (random sparsity pattern) is ambiguous, RoPE regresses with a flag."""
from __future__ import annotations

import copy

import pytest

from db.verdict import rules as R
from db.verdict.judge import judge
from runners.resultfile import load
from tests.conftest import ROOT


@pytest.fixture(scope="module")
def rows():
    doc = load(ROOT / "results/h200/nightly_v4_cef2892.json.gz")
    pick = lambda t, i: next(r for r in doc["results"]  # noqa: E731
                             if r["technique"] == t and r["impl"] == i and r["metric"] == "latency_ms" and r["status"] == "ok")
    out = {"sparse": copy.deepcopy(pick("sparse_gemm", "triton_tile_skip")),
           "rope": copy.deepcopy(pick("rope", "triton_table_fp32"))}
    for r in out.values():
        r["stats"]["timing_seed"] = 1234  # as a run since 014ca01 records it
    return out


def _slower(row: dict, factor: float, seed_shift: int) -> dict:
    out = copy.deepcopy(row)
    out["samples"] = [x * factor for x in row["samples"]]
    out["value"] = row["value"] * factor
    out["stats"]["timing_seed"] = row["stats"]["timing_seed"] + seed_shift
    return out


def test_a_data_dependent_kernel_on_another_instance_is_ambiguous_not_blocking(rows):
    v = judge(rows["sparse"], _slower(rows["sparse"], 1.3, 1))
    assert v.status == R.INSUFFICIENT and v.ambiguous and not v.blocking
    assert "different input instances of a kernel whose time depends on the data" in v.reason


def test_on_the_same_instance_it_blocks_and_a_data_independent_kernel_blocks_with_a_flag(rows):
    same = judge(rows["sparse"], _slower(rows["sparse"], 1.3, 0))
    assert same.status == R.REGRESSED and same.blocking
    rope = judge(rows["rope"], _slower(rows["rope"], 1.3, 1))
    assert rope.status == R.REGRESSED and rope.blocking
    assert any("different input instances" in f for f in rope.flags)
