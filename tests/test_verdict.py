"""db.verdict, the one rule set, on real committed runs: identical code passes, real changes fail,
quality fractions are judged on their counts, needle flips never regress, CPU timings never gate."""
from __future__ import annotations

import copy
import uuid

import pytest

from ci.gate import run_gate
from ci.gate_refs import from_document, load_document
from db.verdict import Thresholds, counts_of, judge, prepare
from tests.conftest import ROOT

H200 = ROOT / "results/h200"
FULL = H200 / "repeats_v3_full"


def doc(path):
    return load_document(path)


def side(d: dict, ref: str = "x"):
    return from_document(ref, d, "file")


def variant(d: dict, change) -> dict:
    """A copy of a real run under a new id, `change(row)` applied to every row."""
    out = copy.deepcopy(d)
    out["run"]["id"] = uuid.uuid4().hex
    for r in out["results"]:
        change(r)
    return out


def by_label(result) -> dict:
    return {v.key.label(): v for v in result.verdicts}


@pytest.fixture(scope="module")
def full():
    return [doc(p) for p in sorted(FULL.glob("rep_*.json.gz"))]


def test_h200_runs_of_one_commit_pass_the_gate(full):
    """19 repeated H200 runs of one commit: every consecutive pair, and first against last, passes."""
    assert len(full) == 19 and len({d["run"]["git"]["commit"] for d in full}) == 1
    for a, b in list(zip(full, full[1:])) + [(full[0], full[-1])]:
        result = run_gate(side(a), side(b))
        bad = [(v.key.label(), v.reason) for v in result.verdicts if v.blocking]
        assert not result.failed, bad
        assert result.counts().get("stable", 0) > 390


def _slowed(full, series, factor):
    def slow(r):
        if (r["technique"], r["impl"], r["case"], r["metric"]) == series:
            r["samples"] = [x * factor for x in r["samples"]]
            r["value"] *= factor
    return run_gate(side(full[0]), side(variant(full[1], slow)))


def test_injected_10pct_slowdown_in_real_h200_samples_fails(full):
    """A quiet series (same-code runs within 0.6 %): +10 % in its real samples fails the gate."""
    series = ("gemm_fp64_ozaki", "cublas_int8_ozaki_s7", "m8192n8192k8192", "latency_ms")
    result = _slowed(full, series, 1.10)
    assert result.failed
    v = by_label(result)["/".join(series)]
    assert v.status == "regressed" and v.blocking and v.change == pytest.approx(0.10, abs=0.02)
    assert 0 < v.ci[0] < 0.10 < v.ci[1]  # the CI carries the run-to-run spread
    assert "this series' own 0.6% run-to-run spread" in v.reason and "narrower than the protocol's 2.8%" in v.reason
    assert [x.key.label() for x in result.verdicts if x.blocking] == ["/".join(series)]


def test_slowdown_within_a_series_own_run_spread_is_not_a_regression(full):
    """cuBLAS fp64 4096^3 moves between two levels 10 % apart in runs of one commit (2.25 / 2.49 ms in
    results/h200/repeats_v2): +10 % on it is within its own learned spread (ambiguous, never stable),
    +40 % is beyond it and fails."""
    series = ("gemm_fp64_ozaki", "cublas_fp64", "m4096n4096k4096", "latency_ms")
    v = by_label(_slowed(full, series, 1.10))["/".join(series)]
    assert v.status == "insufficient data" and v.ambiguous and not v.blocking
    assert "own" in v.reason and "run-to-run spread" in v.reason
    result = _slowed(full, series, 1.40)
    v = by_label(result)["/".join(series)]
    assert v.status == "regressed" and v.blocking and result.failed


def test_quality_fraction_drop_fails_on_its_counts(full):
    """bf16_correct_frac 0.999 -> 0.5 (n = every fp32 point tested, derived from the row's params)."""
    base = variant(full[0], lambda r: r.update(value=0.999) if r["metric"] == "bf16_correct_frac" else None)
    cand = variant(full[1], lambda r: r.update(value=0.5) if r["metric"] == "bf16_correct_frac" else None)
    result = run_gate(side(base), side(cand))
    fr = [v for v in result.verdicts if v.key.metric == "bf16_correct_frac"]
    assert len(fr) == 24 and all(v.status == "regressed" and v.blocking for v in fr)
    assert all(v.k_candidate is not None and v.n_candidate > 1_000_000 for v in fr)
    assert result.failed


def test_unchanged_fractions_of_real_runs_are_stable(full):
    result = run_gate(side(full[0]), side(full[1]))
    fr = [v for v in result.verdicts if v.kind == "quality fraction"]
    assert {v.key.metric for v in fr} == {"bf16_correct_frac", "bf16_identical_frac", "max_grew_frac", "rescale_frac"}
    assert all(v.status == "stable" and v.k_baseline is not None for v in fr)  # judged on counts, never skipped


@pytest.fixture(scope="module")
def needle():
    return doc(H200 / "protocol_v3/v3_attn_sparse_needle.json.gz")


def test_needle_grid_pooled_and_single_trial_flips_never_regress(needle):
    cells = [r for r in needle["results"] if r["technique"] == "needle_retrieval" and r["metric"] == "recall"]
    flipped = {(r["impl"], r["case"]) for r in cells if r["value"] == 1.0 and r["case"].endswith("_depth50_s4")}
    assert flipped

    def flip(r):
        if r["metric"] == "recall" and (r["impl"], r["case"]) in flipped:
            r["value"] = 0.0

    result = run_gate(side(needle), side(variant(needle, flip)))
    pooled = [v for v in result.verdicts if v.key.technique == "needle_retrieval" and v.key.metric == "recall"]
    assert pooled and all(v.key.case_id.endswith("/grid") for v in pooled)
    assert all(v.status == "stable" for v in pooled), [(v.key.label(), v.reason) for v in pooled]
    assert max(v.n_candidate for v in pooled) > 1


def test_needle_grid_that_loses_its_needles_regresses(needle):
    impl = next(r["impl"] for r in needle["results"] if r["technique"] == "needle_retrieval"
                and r["metric"] == "recall" and r["value"] == 1.0)

    def lose(r):
        if r["technique"] == "needle_retrieval" and r["impl"] == impl and r["metric"] == "recall":
            r["value"] = 0.0

    result = run_gate(side(needle), side(variant(needle, lose)))
    hit = [v for v in result.verdicts if v.key.impl == impl and v.key.metric == "recall" and v.status == "regressed"]
    assert hit and all(v.blocking and v.k_candidate == 0 for v in hit)


def test_committed_needle_runs_show_no_flip_as_regression(needle):
    """Two real needle grids (protocol v2 and v3 runs, new seeds): no recall series regresses."""
    v2 = doc(H200 / "protocol_v2/v2_needle_retrieval.json.gz")
    result = run_gate(side(v2), side(needle))
    rec = [v for v in result.verdicts if v.key.technique == "needle_retrieval" and v.kind == "quality fraction"]
    assert rec and not [v.key.label() for v in rec if v.status == "regressed"]


def test_host_timer_timings_are_shown_not_gated(full):
    """The same real samples, labelled with the CPU host-timer protocol and 50% slower."""
    def cpu(r):
        if r["metric"] == "latency_ms" and r["status"] == "ok":
            r["stats"]["protocol"] = "cpu-perfcounter/v1"

    base = variant(full[0], cpu)
    cand = variant(base, lambda r: r.update(samples=[x * 1.5 for x in r["samples"]], value=r["value"] * 1.5)
                   if r["metric"] == "latency_ms" and r["status"] == "ok" else None)
    result = run_gate(side(base), side(cand))
    lat = [v for v in result.verdicts if v.key.metric == "latency_ms"]
    assert lat and all(v.status == "regressed" and not v.gated and not v.blocking for v in lat)
    assert all(v.label == "regressed (host timer, not gated)" for v in lat)
    assert not result.failed
    asked = run_gate(side(base), side(cand), Thresholds(gate_host_timings=True))
    assert asked.failed and all(v.blocking for v in asked.verdicts if v.key.metric == "latency_ms")


@pytest.fixture(scope="module")
def gemm():
    return doc(H200 / "protocol_v3/v3_gemm_fp32_emulation.json.gz")


def test_accuracy_against_its_bound_not_a_relative_rule(gemm):
    row = next(r for r in gemm["results"] if r["metric"] == "rel_err" and r["status"] == "ok"
               and r["stats"].get("tolerance") and r["value"] < r["stats"]["tolerance"] / 2)
    worse = {**row, "value": row["value"] * 1.3}
    v = judge(row, worse)
    assert v.status == "stable" and v.bound == row["stats"]["tolerance"]  # +30%, still within tolerance
    broken = {**row, "value": row["stats"]["tolerance"] * 2}
    v = judge(row, broken)
    assert v.status == "failed correctness" and v.new_failure and v.blocking


def test_probe_points_and_known_wrong_impls_are_expected_not_failing(gemm):
    result = run_gate(side(gemm), side(variant(gemm, lambda r: None)))
    failed = [v for v in result.verdicts if v.status in ("failed correctness", "errored")]
    expected = [v for v in result.verdicts if v.status == "expected failure"]
    assert len(expected) > 900 and not failed
    assert not result.failed
    assert any("probe point" in v.reason for v in expected) and any(v.key.impl.endswith("_chain") for v in expected)


def test_fraction_with_unknown_n_is_not_judged_on_one_value(needle):
    row = next(r for r in needle["results"] if r["technique"] == "sparse_selectors" and r["metric"] == "recall"
               and r["status"] == "ok")
    assert counts_of(row) is None
    v = judge(row, {**row, "value": row["value"] / 2})
    assert v.status == "insufficient data" and "n unknown" in v.reason


def test_counts_derived_for_rows_written_before_counts(full):
    rows = {(r["metric"]): r for r in full[0]["results"] if r["metric"].endswith("_frac")}
    k, n = counts_of(rows["bf16_correct_frac"])
    assert n == rows["bf16_correct_frac"]["params"]["points"] and k / n == pytest.approx(rows["bf16_correct_frac"]["value"])
    assert counts_of(rows["rescale_frac"]) == (rows["rescale_frac"]["stats"]["rescales"],
                                               rows["rescale_frac"]["stats"]["kv_blocks"])
    mqar = next(r for r in doc(H200 / "mqar_h200.json")["results"] if r["metric"] == "recall")
    assert counts_of(mqar)[1] == mqar["stats"]["sequences"] * mqar["params"]["n_kv"]


def test_prepare_pools_needle_cells_per_selector_and_context(needle):
    cells = [r for r in needle["results"] if r["technique"] == "needle_retrieval" and r["metric"] == "recall"]
    pooled = [r for r in prepare(needle["results"]) if r["technique"] == "needle_retrieval" and r["metric"] == "recall"]
    assert len(pooled) == len({(r["impl"], r["params"]["ctx"]) for r in cells})
    assert sum(r["stats"]["n"] for r in pooled) == len(cells)
    assert sum(r["stats"]["k"] for r in pooled) == sum(r["value"] for r in cells)


def test_mann_whitney_matches_scipy():
    import numpy as np
    from scipy.stats import mannwhitneyu

    from db.verdict.stats import mann_whitney_p

    rng = np.random.default_rng(1)
    for n1, n2, shift in [(20, 20, 0.0), (50, 40, 0.03), (200, 10, 0.01), (30, 30, 0.1)]:
        b = rng.normal(1, 0.1, n1).round(2)  # rounding makes ties
        c = rng.normal(1 + shift, 0.1, n2).round(2)
        assert mann_whitney_p(b, c) == pytest.approx(mannwhitneyu(b, c, method="asymptotic").pvalue, rel=1e-9)


def test_two_cpu_smoke_runs_of_one_commit_pass_and_correctness_still_gates():
    """Two real `kwatch run --tier smoke` runs of one commit on a shared 2-core CPU host."""
    a, b = (doc(ROOT / f"results/cpu/smoke_pair/smoke_{i}.json.gz") for i in (1, 2))
    assert a["run"]["git"]["commit"] == b["run"]["git"]["commit"] and a["run"]["tier"] == "smoke"
    result = run_gate(side(a), side(b))
    assert not result.failed, [(v.key.label(), v.reason) for v in result.verdicts if v.blocking]
    timed = [v for v in result.verdicts if v.kind in ("timing", "throughput") and v.status in ("regressed", "improved")]
    assert all(not v.gated and "not gated" in v.label for v in timed)

    def wrong(r):
        if r["metric"] == "rel_err" and r["impl"] == "cublas_fp32" and r["status"] == "ok" and r["stats"].get("tolerance"):
            r["value"] = r["stats"]["tolerance"] * 2

    result = run_gate(side(a), side(variant(b, wrong)))
    assert result.failed and all(v.status == "failed correctness" for v in result.verdicts if v.blocking)
