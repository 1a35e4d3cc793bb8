"""One call judged by its latency and by its throughput gets one verdict: on two committed H200 runs of
the same commit, with the candidate slowed by planted factors around the 5% effect, every (impl, case)
that has both latency_ms and tflops samples gets the same status from both."""
from __future__ import annotations

import copy

import pytest

from db.ingest import load_any
from db.verdict import judge
from tests.conftest import ROOT

RUNS = [ROOT / "results/h200/repeats_v3_full/rep_01.json.gz", ROOT / "results/h200/repeats_v3_full/rep_02.json.gz"]
FACTORS = (0.90, 0.94, 0.948, 0.952, 0.96, 1.0, 1.03, 1.045, 1.049, 1.051, 1.055, 1.07, 1.2)


def rows(path) -> list[dict]:
    return load_any(str(path))[0]["results"]


def slowed(row: dict, factor: float) -> dict:
    """row with every sample as if the call took `factor` times as long."""
    out = copy.deepcopy(row)
    scale = factor if row["metric"] == "latency_ms" else 1.0 / factor
    out["samples"] = [s * scale for s in row["samples"]]
    out["value"] = row["value"] * scale
    return out


def pairs(base: list[dict], cand: list[dict]):
    """(latency baseline, latency candidate, tflops baseline, tflops candidate) per (impl, case)."""
    key = lambda r: (r["technique"], r["impl"], r["case"], r["metric"])  # noqa: E731
    b, c = {key(r): r for r in base if r["status"] == "ok"}, {key(r): r for r in cand if r["status"] == "ok"}
    for k in sorted(c):
        if k[3] == "latency_ms" and k[:3] + ("tflops",) in c and k in b and k[:3] + ("tflops",) in b:
            t = k[:3] + ("tflops",)
            yield b[k], c[k], b[t], c[t]


def test_worse_of_is_the_time_scale():
    from db.verdict.stats import worse_of

    assert worse_of(1.051, "lower") == pytest.approx(0.051)
    assert worse_of(1 / 1.051, "higher") == pytest.approx(0.051)
    assert worse_of(0.95, "lower") == pytest.approx(worse_of(1 / 0.95, "higher"))


@pytest.mark.parametrize("factor", FACTORS)
def test_latency_and_tflops_agree(factor):
    base, cand = rows(RUNS[0]), rows(RUNS[1])
    found = 0
    statuses, unsteady = set(), 0
    for lb, lc, tb, tc in pairs(base, cand):
        lat = judge(lb, slowed(lc, factor))
        thr = judge(tb, slowed(tc, factor))
        assert lat.status == thr.status, (lb["impl"], lb["case"], factor, lat.reason, thr.reason)
        if lat.reason.startswith("unsteady"):  # no history given here: a wildly scattering series waits
            unsteady += 1
            continue
        statuses.add(lat.status)
        found += 1
    assert found >= 20 and unsteady <= found // 4
    if factor >= 1.2:
        assert statuses == {"regressed"}
    if factor <= 0.90:
        assert statuses == {"improved"}


def test_the_issue_case_plus_5_1_percent():
    """A planted +5.1% on a tight series: latency and tflops both regressed (tflops was 'stable')."""
    base, cand = rows(RUNS[0]), rows(RUNS[0])
    lb, lc, tb, tc = next(pairs(base, cand))
    lat, thr = judge(lb, slowed(lc, 1.051)), judge(tb, slowed(tc, 1.051))
    assert lat.status == thr.status
    assert thr.change == pytest.approx(1 / 1.051 - 1, abs=2e-3) and lat.change == pytest.approx(0.051, abs=2e-3)
