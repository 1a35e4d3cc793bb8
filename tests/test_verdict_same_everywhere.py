"""The gate and the dashboard judge the same real committed runs with the same verdict, series by
series, on SQLite and on PostgreSQL (both call db.verdict.judge; this checks nothing restates it)."""
from __future__ import annotations

import pytest

from ci.gate import run_gate
from dashboard import verdict as dash
from db import queries
from tests.test_verdict import H200, FULL, doc, side, variant


def _slow_and_wrong(r):
    if (r["impl"], r["case"], r["metric"]) == ("cublas_fp64", "m4096n4096k4096", "latency_ms"):
        r["samples"] = [x * 1.10 for x in r["samples"]]
    if r["metric"] == "bf16_correct_frac" and r["impl"] == "triton_poly3":
        r["value"] = 0.5


def _flip_needles(r):
    if r["technique"] == "needle_retrieval" and r["metric"] == "recall" and r["case"].endswith("_depth50_s4"):
        r["value"] = 1.0 - r["value"]


@pytest.fixture(scope="module")
def pairs():
    full = doc(FULL / "rep_01.json.gz"), doc(FULL / "rep_02.json.gz")
    needle = doc(H200 / "protocol_v3/v3_attn_sparse_needle.json.gz")
    return [(full[0], full[1]), (full[0], variant(full[1], _slow_and_wrong)), (needle, variant(needle, _flip_needles))]


def test_gate_and_dashboard_agree_on_every_series(pairs, db_url):
    from db.engine import open_db
    from db.ingest import ingest_docs

    docs = {d["run"]["id"]: d for pair in pairs for d in pair}
    ingest_docs(open_db(db_url), [(i, d) for i, d in docs.items()])
    statuses = set()
    for base, cand in pairs:
        gate = {(v.key.technique, v.key.impl, v.key.case_id, v.key.metric, v.key.protocol): (v.status, v.gated)
                for v in run_gate(side(base), side(cand)).verdicts}
        page = dash.compare(queries.run_results(db_url, base["run"]["id"]),
                            queries.run_results(db_url, cand["run"]["id"]))
        shown = {tuple(r[k] for k in dash.KEY): (r["status"], bool(r["gated"])) for r in page.to_dict("records")}
        assert shown.keys() == gate.keys()
        differ = {k: (gate[k], shown[k]) for k in gate if gate[k] != shown[k]}
        assert not differ, list(differ.items())[:5]
        statuses |= {s for s, _ in gate.values()}
    assert {"regressed", "stable", "insufficient data"} <= statuses  # the fixtures exercise real decisions


def test_health_on_real_needle_runs_shows_no_single_trial_flip(sqlite_url):
    """Health over the v2 and v3 H200 needle runs (new seeds, flipped cells between them): needle
    recall is judged per pooled grid (selector x context), never cell by cell."""
    from dashboard.health import health
    from db.engine import open_db
    from db.ingest import ingest_docs

    v2, v3 = doc(H200 / "protocol_v2/v2_needle_retrieval.json.gz"), doc(H200 / "protocol_v3/v3_attn_sparse_needle.json.gz")
    ingest_docs(open_db(sqlite_url), [("v2", v2), ("v3", v3)])
    _, series = health(sqlite_url, queries.runs(sqlite_url), "nightly")
    needle = series[series["technique"] == "needle_retrieval"]
    assert not needle.empty and not needle["case_id"].str.contains("_depth").any()
    recall = needle[needle["metric"] == "recall"]
    assert set(recall["status"]) <= {"stable", "improved"} and (recall["k_baseline"] >= 0).all()
    cells = [r for r in v3["results"] if r["technique"] == "needle_retrieval" and r["metric"] == "recall"]
    assert recall["n_candidate"].sum() == len(cells)  # every cell counted once, as one trial
