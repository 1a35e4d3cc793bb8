"""The dashboard's pure parts: the cost model against the page's table, the comparison rules, the
read-only queries (SQLite and PostgreSQL) and the synthetic large database."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from dashboard import verdict
from suite.techniques.prefill_cost_model.common import SHAPES, attn_cost, predicted


def test_cost_model_reproduces_the_pages_table():
    # The page's printed table: prefill %, dense, @10% sparse, saving.
    want = {"chat turn": (36, 5.000e5, 3.380e5, 1.5), "RAG answer": (89, 3.612e7, 7.325e6, 4.9),
            "doc analysis": (97, 2.112e9, 2.693e8, 7.8), "repo-scale": (99, 1.260e11, 1.350e10, 9.3)}
    for name, p, g in SHAPES:
        s = predicted(p, g, 0.10)
        share, dense, sparse, saving = want[name]
        assert round(s["prefill_share"] * 100) == share
        assert s["dense"] == pytest.approx(dense, rel=1e-3) and s["sparse"] == pytest.approx(sparse, rel=1e-3)
        assert round(s["saving"], 1) == saving


def test_cost_model_sparsity_cuts_prefill_only():
    pf, dc = attn_cost(1000, 100, 0.5)
    assert pf == 1000 * 1000 / 2 * 0.5 and dc == (1000 * 100 + 100 * 100 / 2) * 0.5
    assert predicted(1000, 0, 0.1)["saving"] == pytest.approx(10.0)  # all prefill: saving = 1/sparsity
    assert predicted(1000, 100, 1.0)["saving"] == 1.0


def row(metric="latency_ms", value=1.0, samples=None, status="ok", direction="lower", impl="a", tol=None,
        stats=None):
    return {"technique": "t", "impl": impl, "case_id": "c", "metric": metric, "protocol": "p", "unit": "ms",
            "direction": direction, "value": value, "samples": samples if samples is not None else [],
            "tolerance": tol, "stats": stats, "status": status, "error": None, "benchmark_id": 1}


def frame(*rows):
    return pd.DataFrame(list(rows))


def test_compare_timing_statuses():
    rng = np.random.default_rng(0)
    base = list(rng.normal(1.0, 0.01, 50))
    slow = list(rng.normal(1.2, 0.01, 50))
    noisy_same = list(rng.normal(1.0, 0.01, 50))
    got = verdict.compare(frame(row(samples=base)), frame(row(samples=slow)))
    assert got.loc[0, "status"] == "regressed" and got.loc[0, "rel_change"] == pytest.approx(0.2, abs=0.01)
    got = verdict.compare(frame(row(samples=slow)), frame(row(samples=base)))
    assert got.loc[0, "status"] == "improved"
    assert verdict.compare(frame(row(samples=base)), frame(row(samples=noisy_same))).loc[0, "status"] == "stable"
    # significant but below the minimum effect: stable
    tiny = [x * 1.02 for x in base]
    assert verdict.compare(frame(row(samples=base)), frame(row(samples=tiny))).loc[0, "status"] == "stable"
    # throughput: higher is better, so slower is a drop
    got = verdict.compare(frame(row("tflops", samples=slow, direction="higher")),
                          frame(row("tflops", samples=base, direction="higher")))
    assert got.loc[0, "status"] == "regressed"
    got = verdict.compare(frame(row(samples=base[:3])), frame(row(samples=slow[:3])))
    assert got.loc[0, "status"] == "insufficient data"


def test_compare_error_recall_failures_and_order():
    base = frame(row("rel_err", 1e-7, [1e-7] * 3), row("recall", 1.0, direction="higher", impl="r"),
                 row("recall", 0.96, direction="higher", impl="k", stats={"k": 960, "n": 1000}),
                 row("rel_err", 1e-7, impl="tol"), row(samples=[1.0] * 10, impl="gone"),
                 row(samples=[1.0] * 10, impl="err"))
    cand = frame(row("rel_err", 2e-7, [2e-7] * 3), row("recall", 0.9, direction="higher", impl="r"),
                 row("recall", 0.5, direction="higher", impl="k", stats={"k": 500, "n": 1000}),
                 row("rel_err", 5e-6, impl="tol", tol=1e-6),
                 row(samples=[1.0] * 10, impl="new"), row(value=None, status="error", impl="err"))
    got = verdict.compare(base, cand).set_index("impl")
    assert got.loc["a", "status"] == "insufficient data"  # no tolerance stored: shown, never a relative rule
    assert got.loc["r", "status"] == "insufficient data"  # a fraction with n unknown is not judged on one value
    assert got.loc["k", "status"] == "regressed"  # 960/1000 -> 500/1000 on the counts
    assert got.loc["k", "k_candidate"] == 500 and got.loc["k", "n_candidate"] == 1000
    assert got.loc["tol", "status"] == "failed correctness"
    assert got.loc["new", "status"] == "missing baseline"
    assert got.loc["err", "status"] == "errored"
    order = list(verdict.compare(base, cand)["status"])
    assert order.index("failed correctness") < order.index("errored") < order.index("regressed") \
        < order.index("missing baseline")
    c = verdict.counts(verdict.compare(base, cand))
    assert c["regressed"] == 1 and c["insufficient data"] == 2 and sum(c.values()) == 6


@pytest.fixture
def loaded(db_url, smoke_file):
    from db.engine import open_db
    from db.ingest import ingest_docs
    from db.validate import load_and_validate

    ingest_docs(open_db(db_url), [("smoke", load_and_validate(str(smoke_file)))])
    return db_url


def test_queries_read_only_on_both_databases(loaded):
    from sqlalchemy import text

    from db import queries as q

    runs = q.runs(loaded)
    assert len(runs) == 1 and runs.loc[0, "hardware"].startswith("CPU")
    cat = q.catalog(loaded)
    assert {"latency_ms", "rel_err", "tflops"} <= set(cat["metric"])
    assert cat.groupby(["benchmark_id", "metric"]).size().max() == 1
    first = cat[cat["metric"] == "latency_ms"].iloc[0]
    pts = q.series_points(loaded, [first["benchmark_id"]], "latency_ms")
    assert len(pts) == 1 and len(pts.loc[0, "samples"]) > 1 and pts.loc[0, "hardware"] == runs.loc[0, "hardware"]
    assert len(q.run_results(loaded, runs.loc[0, "run_id"])) == len(cat)
    assert q.change_points(loaded, "t", "i", "c", "m").empty
    assert q.technique_runs(loaded, "gemm_fp32_emulation", ["rel_err"], "m").loc[0, "n_results"] > 0
    assert q.technique_runs(loaded, "gemm_fp32_emulation", ["rel_err"], "exp_a").empty
    with pytest.raises(Exception, match="(?i)read.only|readonly|attempt to write"):
        with q.read_engine(loaded).begin() as conn:
            conn.execute(text("DELETE FROM results"))


def test_queries_on_missing_schema(tmp_path):
    from db import queries as q

    url = f"sqlite:///{tmp_path / 'nothing.db'}"
    assert q.runs(url).empty and q.catalog(url).empty and q.run_results(url, "x").empty
    assert q.series_points(url, [1], "m").empty and q.technique_runs(url, "t", ["m"]).empty


def test_synthetic_large_database_small_scale(tmp_path):
    from dashboard import bench_large

    path = tmp_path / "big.db"
    n = bench_large.build(path, n_results=6000)
    assert n >= 6000
    times = bench_large.time_queries(f"sqlite:///{path}")
    assert set(times) == {"health", "trends", "compare", "numerics", "retrieval"}
    assert all(math.isfinite(t) for t in times.values())
    from db import queries as q

    url = f"sqlite:///{path}"
    sweep = q.technique_runs(url, "gemm_fp32_emulation_sweep", ["rel_err"], "exp_a")
    assert len(sweep) >= 1
    res = q.technique_results(url, "gemm_fp32_emulation_sweep", ["rel_err"], sweep["run_id"].iloc[:1], "exp_a")
    assert len(res) == 3 * 13 * 13


def test_known_failures_rank_below_new_ones_and_regressions():
    rng = np.random.default_rng(2)
    base = frame(row(value=None, status="failed_correctness", impl="known"), row(samples=[1.0] * 10, impl="new"),
                 row(samples=list(rng.normal(1.0, 0.01, 20)), impl="slow"))
    cand = frame(row(value=None, status="failed_correctness", impl="known"),
                 row(value=None, status="failed_correctness", impl="new"),
                 row(samples=list(rng.normal(1.5, 0.01, 20)), impl="slow"))
    got = verdict.compare(base, cand)
    assert list(got["impl"]) == ["new", "slow", "known"]
    assert list(got["new_failure"]) == [True, False, False]


def test_sweep_probe_points_and_known_wrong_impls_are_not_new_failures():
    """First runs (no baseline) of rows written before stats recorded probes/expected failures."""
    def failed(tech, impl, case):
        return {**row(value=None, status="failed_correctness", impl=impl), "technique": tech, "case_id": case}

    cand = frame(failed("gemm_fp32_emulation_sweep", "triton_bf16x6", "sweep_ea+0_eb+126"),
                 failed("gemm_fp32_emulation", "cublas_bf16x9_kcat", "m8192n8192k8192"),
                 failed("gemm_fp32_emulation", "cublas_fp32", "m8192n8192k8192"),
                 failed("gemm_fp32_emulation_sweep", "triton_bf16x6", "no_such_probe_point_in_a_tech_without_probe")
                 | {"technique": "t"})
    new = {(r["technique"], r["impl"]): r["new_failure"] for r in verdict.compare(frame(), cand).to_dict("records")}
    assert new == {("gemm_fp32_emulation_sweep", "triton_bf16x6"): False,
                   ("gemm_fp32_emulation", "cublas_bf16x9_kcat"): False,
                   ("gemm_fp32_emulation", "cublas_fp32"): True, ("t", "triton_bf16x6"): True}


def test_health_pairs_each_series_with_its_previous_result():
    from dashboard.health import pairs

    # r2 is the newest run (window r2, r1), r0 older; series (1, m) in all, (2, m) only in r0 and r1,
    # (3, m) only in r0 (not in the window: not judged).
    idx = pd.DataFrame({"result_id": [1, 2, 3, 4, 5, 6], "benchmark_id": [1, 2, 3, 1, 2, 1],
                        "metric": ["m"] * 6, "protocol": [None] * 6, "status": ["ok"] * 6,
                        "run_id": ["r0", "r0", "r0", "r1", "r1", "r2"]})
    cand, base = pairs(idx, ["r2", "r1"], ["r2", "r1", "r0"])
    assert sorted(cand) == [5, 6] and sorted(base) == [2, 4]
