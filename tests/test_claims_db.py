"""Claim statuses from real H200 result rows ingested into SQLite and PostgreSQL: a claim's status
changes when the stored results do."""
import copy
import dataclasses
import json
from pathlib import Path

import pytest

from db.claims import evaluate, ledger
from db.engine import open_db
from db.ingest import ingest_docs
from suite.claims.spec import (CENSORED, CONTRADICTED, NOT_ON_OUR_HARDWARE, NOT_REPRODUCED, PENDING, REPRODUCED, STATUSES,
                               Claim, Custom, Selector, stated, up_to)

H200_FILE = Path(__file__).parent / "fixtures" / "claims" / "h200_gemm_foundation.json"
T = "gemm_fp32_emulation"
BIG = "m8192n8192k8192"


# The checkout the fixture's run was made from, recorded for the tests that need a run that can back a
# claim (the file itself records none: its run is the test of the commit rule).
COMMIT = "a7ec9fff7e5a35dec25a7b1adeb145f3c28aaa62"


def h200_doc(commit: str | None = COMMIT) -> dict:
    """A real nightly run of gemm_fp32_emulation on the H200 (samples trimmed), with `commit` as
    its git commit."""
    d = json.loads(H200_FILE.read_text())
    d["run"]["git"]["commit"] = commit
    return d


def later(doc: dict, run_id: str, minutes: int = 10, gpu: str | None = None, scale: dict | None = None) -> dict:
    """A copy of doc as a later run: new id and start time, optionally on another GPU, with the
    values of (impl, metric) pairs multiplied by scale[(impl, metric)]."""
    d = copy.deepcopy(doc)
    d["run"]["id"] = run_id
    d["run"]["started_at"] = d["run"]["started_at"].replace("19:32:35", f"19:{32 + minutes:02d}:35")
    if gpu:
        d["run"]["env"]["gpu_name"] = gpu
    for r in d["results"]:
        f = (scale or {}).get((r["impl"], r["metric"]))
        if f is not None and r["value"] is not None:
            r["value"] *= f
    return d


def status_of(url: str, claim: Claim):
    with open_db(url)() as s:
        [v] = evaluate(s, [claim])
    return v


FP32_51 = Claim("test_cublas_fp32_51", "cuBLAS FP32 runs 8192^3 at 51 TFLOP/s on the H200.", 51, "TFLOP/s",
                "the project's notes", "independent", "H200", "test", stated(51),
                Selector(T, "tflops", "cublas_fp32", case=BIG), technique=T, runs_on=("H200",))
X6_UP_TO_3 = Claim("test_bf16x6_up_to_3x", "BF16x6 up to 3x FP32.", 3, "x", "test", "vendor", "H200", "test",
                   up_to(3), Selector(T, "tflops", ("triton_dot_bf16x6",), case=BIG, over="cublas_fp32"),
                   technique=T, runs_on=("H200",))
ON_B200 = Claim("test_b200", "BF16x6 over FP32 is 1.4x on B200.", 1.4, "x", "test", "vendor", "B200", "test",
                stated(1.4), Selector(T, "tflops", "triton_dot_bf16x6", case=BIG, over="cublas_fp32"),
                technique=T, runs_on=("B200",),
                analog=Selector(T, "tflops", "triton_dot_bf16x6", case=BIG, over="cublas_fp32"),
                projection="suite.claims.projections:fp32_emulation_blackwell")


def test_no_results_pending_then_reproduced_then_contradicted(db_url):
    # Empty database: an any-hardware claim is pending; an H200 claim has no H200 run to go on.
    assert status_of(db_url, dataclasses.replace(FP32_51, hardware="any", runs_on=())).status == PENDING
    assert status_of(db_url, FP32_51).status == NOT_ON_OUR_HARDWARE
    factory = open_db(db_url)
    ingest_docs(factory, [("h200", h200_doc())])
    v = status_of(db_url, FP32_51)
    assert v.status == REPRODUCED and v.value == pytest.approx(51.25, abs=0.01)
    assert "e0a9b31f" in v.detail and v.evidence
    # A later run where cuBLAS FP32 is 40% slower: the claim is now contradicted.
    ingest_docs(factory, [("slower", later(h200_doc(), "later-slower", scale={("cublas_fp32", "tflops"): 0.6}))])
    v = status_of(db_url, FP32_51)
    assert v.status == CONTRADICTED and v.value == pytest.approx(30.75, abs=0.01)
    assert "later-slower" in v.detail


def test_ratio_up_to_claim_not_reproduced_then_reproduced(db_url):
    factory = open_db(db_url)
    ingest_docs(factory, [("h200", h200_doc())])
    v = status_of(db_url, X6_UP_TO_3)
    assert v.status == NOT_REPRODUCED  # 71.0 / 51.2 = 1.39x: a best case not reached, not refuted
    assert v.value == pytest.approx(71.0 / 51.25, rel=1e-3)
    ingest_docs(factory, [("faster", later(h200_doc(), "later-x6", scale={("triton_dot_bf16x6", "tflops"): 2.1}))])
    assert status_of(db_url, X6_UP_TO_3).status == REPRODUCED  # 2.92x >= 90% of 3x
    # Two-sided: 3.6x is more than 15% above the stated best case, so "up to 3x" is contradicted.
    ingest_docs(factory, [("fastest", later(h200_doc(), "later-x6b", 20, scale={("triton_dot_bf16x6", "tflops"): 2.6}))])
    v = status_of(db_url, X6_UP_TO_3)
    assert v.status == CONTRADICTED and v.value == pytest.approx(2.6 * 71.0 / 51.25, rel=1e-3)


def test_absent_hardware_gives_projection_until_a_run_on_it_is_stored(db_url):
    factory = open_db(db_url)
    ingest_docs(factory, [("h200", h200_doc())])
    v = status_of(db_url, ON_B200)
    assert v.status == NOT_ON_OUR_HARDWARE and v.value is None
    assert v.analog == pytest.approx(71.0 / 51.25, rel=1e-3)  # our H200 measurement, shown beside it
    p = v.projection
    # GB200 ceiling 2500 / (9 x 80) = 3.47x, times our efficiency 1.385 / (989.5 / (9 x 67) = 1.64).
    assert p.value == pytest.approx(3.4722 * (71.0 / 51.25) / (989.5 / 603), rel=1e-3)
    assert any("GB200" in s for s in p.sources) and v.row()["projection"]["label"] == "projection"
    # The same measurements stored as a B200 run: the claim is now judged on them.
    ingest_docs(factory, [("b200", later(h200_doc(), "on-b200", gpu="NVIDIA B200"))])
    v = status_of(db_url, ON_B200)
    assert v.status == REPRODUCED and v.projection is None and "NVIDIA B200" in v.detail


def test_failed_correctness_rows_never_count(db_url):
    factory = open_db(db_url)
    doc = later(h200_doc(), "all-failed")
    for r in doc["results"]:
        r["status"], r["error"] = "failed_correctness", "error above tolerance"
    ingest_docs(factory, [("failed", doc)])
    assert status_of(db_url, FP32_51).status == PENDING  # an H200 run exists, but no valid row


def _sweep_doc(run_id: str, minutes: int, lowest_valid: int, highest_valid: int = 111,
               cliff: dict | None = None) -> dict:
    """Exponent-sweep rows of triton_bf16x6 (within_fp32), and rel_err rows of x6, x9 and cuBLAS FP32
    at the cliff points given as {case: (x6, x9, fp32)}."""
    d = later(h200_doc(), run_id, minutes)
    base = dict(d["results"][0], technique="gemm_fp32_emulation_sweep", samples=[], stats={})
    d["results"] = []
    grid = (-140, -126, -110, -64, 0, 64, 111, 127)
    for ea in grid:
        for eb in grid:
            ok = lowest_valid <= ea <= highest_valid and lowest_valid <= eb <= highest_valid
            d["results"].append(dict(base, impl="triton_bf16x6", case=f"sweep_ea{ea:+d}_eb{eb:+d}",
                                     metric="within_fp32", unit="bool", direction="higher",
                                     value=1.0 if ok else 0.0,
                                     params={"m": 256, "n": 256, "k": 256, "exp_a": ea, "exp_b": eb}))
    for case, errs in (cliff or {}).items():
        for impl, e in zip(("triton_bf16x6", "triton_bf16x9", "cublas_fp32"), errs):
            d["results"].append(dict(base, impl=impl, case=case, metric="rel_err", unit="1", direction="lower",
                                     value=e, params={"m": 64, "n": 64, "k": 1024, "dist": "cliff", "exp": 0}))
    return d


def test_exponent_range_edges_each_have_a_status(db_url):
    """The page's [-110, 111] as two claims: each edge reproduces within 8 exponents and is
    contradicted by a sweep whose edge lies elsewhere."""
    from suite.claims.registry import get

    lower, upper = get("bf16x6_range_lower_edge"), get("bf16x6_range_upper_edge")
    assert isinstance(lower.check, Custom) and isinstance(upper.check, Custom)
    factory = open_db(db_url)
    ingest_docs(factory, [("good", _sweep_doc("sweep-good", 5, -110))])
    v_lo, v_hi = status_of(db_url, lower), status_of(db_url, upper)
    assert (v_lo.status, v_lo.value, v_hi.status, v_hi.value) == (REPRODUCED, -110, REPRODUCED, 111)
    # Our split: valid from -110 up to 127, the grid's top: the sweep cannot see where the upper edge lies
    # (fp32's range ends there), so that edge is censored, not contradicted.
    ingest_docs(factory, [("wide", _sweep_doc("sweep-wide", 20, -110, 127))])
    v_lo, v_hi = status_of(db_url, lower), status_of(db_url, upper)
    assert (v_lo.status, v_hi.status, v_hi.value) == (REPRODUCED, CENSORED, 127)
    assert "cannot place it" in v_hi.detail
    ingest_docs(factory, [("bad", _sweep_doc("sweep-bad", 25, -64, 64))])
    assert status_of(db_url, lower).status == CONTRADICTED and status_of(db_url, lower).value == -64
    # an edge inside the grid, away from the claim's, still contradicts it
    assert (status_of(db_url, upper).status, status_of(db_url, upper).value) == (CONTRADICTED, 64)


def test_x6_against_x9_inside_the_range(db_url):
    """The third part: BF16x6 within 4x FP32's error wherever BF16x9 is, inside [-110, 111].
    Random-like points reproduce it; a cliff point where x6 is 25x FP32 and x9 holds contradicts it."""
    from suite.claims.registry import get

    claim = get("bf16x6_as_x9_in_range")
    factory = open_db(db_url)
    ingest_docs(factory, [("calm", _sweep_doc("sweep-calm", 5, -110, cliff={"spread_s0": (8e-8, 8e-8, 1e-7)}))])
    v = status_of(db_url, claim)
    assert v.status == REPRODUCED and v.value == pytest.approx(0.8)
    ingest_docs(factory, [("cliff", _sweep_doc("sweep-cliff", 20, -110, cliff={
        "spread_s0": (8e-8, 8e-8, 1e-7), "cliff_k1024": (1.9e-4, 1.2e-7, 7.7e-6)}))])
    v = status_of(db_url, claim)
    assert v.status == CONTRADICTED and v.value == pytest.approx(1.9e-4 / 7.7e-6)
    assert "cliff_k1024" in v.detail and "beyond 4x at 1 points" in v.detail


def test_a_run_without_a_commit_backs_no_claim(db_url):
    """The fixture as recorded (git.commit null): FP32_51 stays pending and says why; the same
    results from a run with a commit reproduce it. The analog of a claim on other hardware obeys the
    same rule."""
    factory = open_db(db_url)
    ingest_docs(factory, [("uncommitted", h200_doc(commit=None))])
    v = status_of(db_url, FP32_51)
    assert v.status == PENDING and "needs a re-run" in v.detail and "without a git commit" in v.detail
    assert "e0a9b31f" in v.detail
    v = status_of(db_url, ON_B200)
    assert v.status == NOT_ON_OUR_HARDWARE and v.analog is None and "without a git commit" in v.detail
    ingest_docs(factory, [("committed", later(h200_doc(), "committed-run"))])
    v = status_of(db_url, FP32_51)
    assert v.status == REPRODUCED and "committed-run" in v.detail
    assert status_of(db_url, ON_B200).analog == pytest.approx(71.0 / 51.25, rel=1e-3)


def test_like_hardware_only(db_url):
    """An H100 claim is not reproduced by H200 runs (the same die): they are its analog; an H100 run
    then decides it."""
    on_h100 = dataclasses.replace(FP32_51, id="test_h100", hardware="H100", runs_on=("H100",),
                                  analog=FP32_51.check)
    factory = open_db(db_url)
    ingest_docs(factory, [("h200", h200_doc())])
    v = status_of(db_url, on_h100)
    assert v.status == NOT_ON_OUR_HARDWARE and v.analog == pytest.approx(51.25, abs=0.01)
    ingest_docs(factory, [("h100", later(h200_doc(), "on-h100", gpu="NVIDIA H100 80GB HBM3"))])
    v = status_of(db_url, on_h100)
    assert v.status == REPRODUCED and "H100" in v.detail


def test_whole_ledger_on_real_results(db_url):
    ingest_docs(open_db(db_url), [("h200", h200_doc())])
    rows = ledger(db_url)
    by_id = {r["id"]: r for r in rows}
    assert all(r["status"] in STATUSES for r in rows)
    assert by_id["prefill_saving_doc_10pct"]["status"] == REPRODUCED
    assert by_id["fp4_2x_fp8_weight_bytes"]["status"] == REPRODUCED  # MXFP8 / NVFP4, both scales charged
    assert by_id["tensor_core_2x_per_generation"]["status"] == CONTRADICTED  # A100 -> H100 is 3.17x
    x9 = by_id["bf16x9_up_to_3x"]
    assert x9["status"] == NOT_ON_OUR_HARDWARE and x9["projection"]["label"] == "projection"
    assert x9["projection"]["value"] > 0
    assert by_id["ssa_52x"]["status"] == PENDING and "independent" in by_id["ssa_52x"]["detail"]


def test_needle_claim_from_a_real_cpu_smoke_run(db_url):
    """DHSA's needle claim judged on a real CPU smoke run of needle_retrieval; then a later run in
    which our DHSA-style selector loses most needles makes it "not reproduced" (a weaker proxy than
    the authors' trained predictor cannot contradict them)."""
    from suite.claims.registry import get

    claim = get("dhsa_matches_dense_needle")
    doc = json.loads((H200_FILE.parent / "cpu_needle_smoke.json").read_text())
    factory = open_db(db_url)
    ingest_docs(factory, [("smoke", doc)])
    v = status_of(db_url, claim)
    assert v.status == REPRODUCED and v.value == 1.0 and "triton_dhsa_chunks" in v.detail
    worse = copy.deepcopy(doc)
    worse["run"]["id"] = "needle-worse"
    worse["run"]["started_at"] = "2030-01-01T00:00:00+00:00"
    for r in worse["results"]:
        if r["impl"] == "triton_dhsa_chunks" and r["metric"] == "retrieval" and r["params"]["depth"] < 0.65:
            r["value"] = 0.0
    ingest_docs(factory, [("worse", worse)])
    v = status_of(db_url, claim)
    assert v.status == NOT_REPRODUCED and v.value == pytest.approx(4 / 11)


def test_a_broken_check_is_reported_not_fatal(db_url):
    broken = Claim("test_broken", "s", 1, "x", "src", "authors", "any", "test", stated(1),
                   Custom(T, "suite.claims.arithmetic:no_such_function"))
    ingest_docs(open_db(db_url), [("h200", h200_doc())])
    with open_db(db_url)() as s:
        v_broken, v_ok = evaluate(s, [broken, FP32_51])
    assert v_broken.status == PENDING and "check failed" in v_broken.detail
    assert v_ok.status == REPRODUCED


def impls_at_big(rows: list[dict]):
    """A Custom check's function: how many implementations have a row at the 8192^3 case."""
    seen = {r["impl"] for r in rows if r["case"] == BIG}
    return (float(len(seen)), ", ".join(sorted(seen))) if seen else None


def test_a_later_run_of_some_implementations_keeps_the_others_latest_rows(db_url):
    """A Custom check sees each (implementation, case)'s latest run: a later run of cuBLAS FP32 alone
    replaces cuBLAS FP32's rows and leaves every other implementation's rows in the check."""
    count = Claim("test_impl_count", "s", 1, "impls", "src", "ours", "any", "test", stated(1),
                  Custom(T, "tests.test_claims_db:impls_at_big", "tflops"), technique=T)
    factory = open_db(db_url)
    ingest_docs(factory, [("h200", h200_doc())])
    before = status_of(db_url, count).value
    assert before >= 3
    only_cublas = later(h200_doc(), "later-cublas-only")
    only_cublas["results"] = [r for r in only_cublas["results"] if r["impl"] == "cublas_fp32"]
    ingest_docs(factory, [("subset", only_cublas)])
    v = status_of(db_url, count)
    assert v.value == before and "later-cublas-only" in v.detail


def test_a_claim_whose_last_runs_disagree_is_unsettled_until_five_agree(db_url):
    """The status is the latest run's; the history marks the claim unsettled while the band's verdicts on
    its last five matching runs differ, and the markdown ledger says so."""
    from ci.claims_cli import render_markdown
    from db.claims import HISTORY

    factory = open_db(db_url)
    ingest_docs(factory, [("h200", h200_doc())])
    v = status_of(db_url, FP32_51)
    assert v.status == REPRODUCED and not v.unsettled and [h["status"] for h in v.history] == [REPRODUCED]
    ingest_docs(factory, [("slow", later(h200_doc(), "slow", 5, scale={("cublas_fp32", "tflops"): 0.6}))])
    ingest_docs(factory, [("back", later(h200_doc(), "back", 10))])
    v = status_of(db_url, FP32_51)
    assert v.status == REPRODUCED and v.unsettled
    assert [h["run_id"] for h in v.history][:2] == ["back", "slow"]
    assert [h["status"] for h in v.history] == [REPRODUCED, CONTRADICTED, REPRODUCED]
    assert "unsettled: the last 3 matching runs split (1 contradicted, 2 reproduced" in v.detail
    md = render_markdown([v.row()])
    assert "**reproduced** (unsettled)" in md and "Unsettled (" in md
    # Runs on other hardware do not enter the history.
    ingest_docs(factory, [("a100", later(h200_doc(), "a100", 12, gpu="NVIDIA A100-SXM4-80GB",
                                         scale={("cublas_fp32", "tflops"): 0.3}))])
    assert all(h["run_id"] != "a100" for h in status_of(db_url, FP32_51).history)
    # Five agreeing runs on top push the disagreeing one out of the window.
    ingest_docs(factory, [(f"r{i}", later(h200_doc(), f"r{i}", 14 + i)) for i in range(HISTORY - 1)])
    v = status_of(db_url, FP32_51)
    assert len(v.history) == HISTORY and not v.unsettled and "unsettled" not in v.detail


def test_a_claims_history_holds_only_runs_under_the_newest_runs_timing_protocol(db_url):
    """Two timing protocols are never one series: after a run timed under a newer protocol version the
    claim's history starts again from it, so runs measured the old way do not unsettle it."""
    factory = open_db(db_url)
    ingest_docs(factory, [("h200", h200_doc())])
    ingest_docs(factory, [("slow", later(h200_doc(), "slow", 5, scale={("cublas_fp32", "tflops"): 0.6}))])
    assert status_of(db_url, FP32_51).status == CONTRADICTED
    v4 = later(h200_doc(), "v4", 10)
    for r in v4["results"]:
        if (r.get("stats") or {}).get("protocol"):
            r["stats"]["protocol"] = "cuda-events+l2read+graph/v4"
    ingest_docs(factory, [("v4", v4)])
    v = status_of(db_url, FP32_51)
    assert v.status == REPRODUCED and [h["run_id"] for h in v.history] == ["v4"] and not v.unsettled
    # a later run under the old protocol is the status (the newest run), with its own version's history
    ingest_docs(factory, [("old", later(h200_doc(), "old", 12, scale={("cublas_fp32", "tflops"): 0.6}))])
    v = status_of(db_url, FP32_51)
    assert v.status == CONTRADICTED and [h["run_id"] for h in v.history] == ["old", "slow", h200_doc()["run"]["id"]]
