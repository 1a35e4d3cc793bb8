"""A regression of a series with no same-code history whose samples scatter within a run far beyond the
protocol's run-to-run spread is ambiguous ("unsteady"), never blocking on its own: the H100 pair of one
commit (results/h100, 1661801) blocked on three such series before; a steady series still blocks."""
from __future__ import annotations

import copy

from db.ingest import load_any
from db.verdict import Thresholds, judge
from db.verdict.spread import SpreadTable
from tests.conftest import ROOT

H100_PAIR = [ROOT / "results/h100/nightly_v4_1661801.json.gz", ROOT / "results/h100/nightly_v4_1661801_b.json.gz"]
FOUNDATION = ROOT / "results/h200/gemm_fp32_emulation_nightly_foundation.json.gz"


def _rows(path) -> dict:
    return {(r["technique"], r["impl"], r["case"], r["metric"]): r for r in load_any(str(path))[0]["results"]}


def _slowed(row: dict, factor: float) -> dict:
    out = copy.deepcopy(row)
    out["samples"] = [s * factor for s in row["samples"]]
    return out


def test_the_h100_pair_of_one_commit_has_no_blocking_series_and_the_three_wait_as_unsteady():
    a, b = (_rows(p) for p in H100_PAIR)
    th = Thresholds(spreads=SpreadTable())  # no history on this GPU, as on a new host
    blocking, unsteady = [], []
    for k, cand in b.items():
        if k[3] != "latency_ms" or cand["status"] != "ok" or a.get(k, {}).get("status") != "ok":
            continue
        v = judge(a[k], cand, th)
        blocking += [k] if v.blocking else []
        unsteady += [k[1:3]] if v.reason.startswith("unsteady") else []
    assert not blocking, blocking
    assert ("torch_mxfp4", "w_gauss_r256c4096") in unsteady and ("triton_zeta_morton", "ctx128k_b128_d10") in unsteady
    # the same rows under the rule switched off block, as the gate did before
    off = Thresholds(spreads=SpreadTable(), unsteady_cv=float("inf"))
    k = ("block_scaled_formats", "torch_mxfp4", "w_gauss_r256c4096", "latency_ms")
    assert judge(a[k], b[k], off).blocking


def test_a_steady_series_still_blocks_and_an_unsteady_one_says_why():
    rows = _rows(FOUNDATION)
    th = Thresholds(spreads=SpreadTable())
    steady = rows[("gemm_fp32_emulation", "triton_dot_bf16x3", "m8192n8192k8192", "latency_ms")]
    v = judge(steady, _slowed(steady, 1.10), th)
    assert v.status == "regressed" and v.blocking
    noisy = rows[("gemm_fp32_emulation", "triton_dot_bf16x3", "m2048n2048k2048", "latency_ms")]  # 20% stdev/mean
    v = judge(noisy, _slowed(noisy, 1.10), th)
    assert not v.blocking and v.ambiguous and v.status == "insufficient data"
    assert v.reason.startswith("unsteady: +10.0%") and "over 3x the protocol's 2.8% run-to-run spread" in v.reason
