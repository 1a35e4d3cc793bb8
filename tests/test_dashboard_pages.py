"""Every dashboard page under Streamlit's AppTest: empty database, no schema at all, and a database
loaded with the committed result files, the CPU smoke run and a later run with a planted regression."""
from __future__ import annotations

import base64
import copy
import glob
import json
import math
import uuid
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import ROOT

APP = str(ROOT / "dashboard" / "app.py")
PAGES = ["health", "alerts", "trends", "compare", "runs", "numerics", "retrieval", "claims", "cost_model"]
AppTest = pytest.importorskip("streamlit.testing.v1").AppTest


def committed_results() -> list[Path]:
    """Result files (schema 1) under results/: every plain one, and the single-technique runs at the top
    of results/h200, gzipped where large; the repeat folders and the whole nightlies are left out (the
    dashboard tests would spend their time ingesting them), and so is other JSON there (raw benchmark dumps)."""
    from ci.detect_series import technique_runs
    from runners.resultfile import load

    plain = glob.glob(str(ROOT / "results" / "**" / "*.json"), recursive=True)
    paths = sorted(set(plain) | set(technique_runs(ROOT / "results" / "h200")))
    return [Path(p) for p in paths if load(p).get("schema") is not None]


def slower_copy(doc: dict, factor: float = 1.5) -> dict:
    """The same run one hour later under a new id, every timing sample `factor` times slower."""
    from datetime import datetime, timedelta

    out = copy.deepcopy(doc)
    out["run"]["id"] = uuid.uuid4().hex
    t = datetime.fromisoformat(out["run"]["started_at"]) + timedelta(hours=1)
    out["run"]["started_at"] = t.isoformat()
    out["run"]["finished_at"] = None
    for r in out["results"]:
        if r["metric"] == "latency_ms" and r["status"] == "ok":
            r["samples"] = [s * factor for s in r["samples"]]
            r["value"] *= factor
        elif r["metric"] == "tflops" and r["status"] == "ok":
            r["samples"] = [s / factor for s in r["samples"]]
            r["value"] /= factor
    return out


def probe_doc(template: dict) -> dict:
    """A run holding rows in the formats the probe techniques write (values made up, formats real):
    exponent sweep, needle grid, exp ULP, MQAR recall and measured prefill savings."""
    doc = copy.deepcopy(template)
    doc["run"]["id"] = uuid.uuid4().hex
    rows = []

    def add(technique, impl, case, metric, value, params, unit="1", direction="lower", status="ok"):
        rows.append({"technique": technique, "impl": impl, "impl_version": 1, "impl_hash": "x", "case": case,
                     "params": params, "metric": metric, "unit": unit, "direction": direction,
                     "value": value, "samples": [], "stats": {}, "status": status,
                     "error": None if status == "ok" else "non-finite output"})

    grid = (-140, -110, 0, 111, 127)
    for impl in ("cublas_fp32", "triton_bf16x6", "triton_bf16x9"):
        for ea in grid:
            for eb in grid:
                params = {"m": 32, "n": 32, "k": 32, "dist": "unit_exp", "exp_a": ea, "exp_b": eb}
                inside = -110 <= ea <= 111 and -110 <= eb <= 111
                ok = inside or impl != "triton_bf16x6"
                add("gemm_fp32_emulation_sweep", impl, f"sweep_ea{ea:+d}_eb{eb:+d}", "within_fp32",
                    float(ok), params, "bool", "higher")
                add("gemm_fp32_emulation_sweep", impl, f"sweep_ea{ea:+d}_eb{eb:+d}", "rel_err",
                    1e-7 if ok else None, params, status="ok" if ok else "failed_correctness")
    for sel in ("triton_exact_topk", "triton_mean_pool"):
        for ctx in (4096, 16384):
            for d in range(11):
                add("needle_retrieval", sel, f"ctx{ctx // 1024}k_depth{d * 10}_s4", "recall",
                    1.0 if sel == "triton_exact_topk" or d % 3 else 0.0,
                    {"ctx": ctx, "depth": d / 10, "strength": 4.0}, direction="higher")
    for impl, ulp in (("triton_mufu", 2), ("triton_poly3", 180), ("triton_poly5", 3)):
        for m in ("ulp_max", "ulp_p99", "ulp_p50", "ulp_mean"):
            add("exp_approx", impl, "acc_all/all_fp32", m, ulp, {"sampling": "every fp32"}, "ulp")
    for sel, dens in (("dense", 1.0), ("mean_pool", 0.1), ("mean_pool", 0.25)):
        for ctx in (256, 1024, 4096):
            params = {"ctx": ctx, "density": dens, "trained_lengths": [256, 1024]}
            case = f"ctx{ctx}" if sel == "dense" else f"ctx{ctx}_d{round(dens * 100)}"
            add("mqar", sel, case, "recall", 1.0 if sel == "dense" else dens * 256 / ctx, params, direction="higher")
            add("mqar", sel, case, "nonquery_loss_nats", 0.73, params, "nats")
    for p, g in ((600, 400), (8000, 500)):
        params = {"prompt": p, "generated": g, "density": 0.1}
        add("prefill_cost_model", "h200_measured", f"w_p{p}_g{g}", "measured_saving_kernel", 1.2 if p < 1000
            else 3.9, params, "x", "higher")
        add("prefill_cost_model", "h200_measured", f"w_p{p}_g{g}", "measured_prefill_share", 0.3 if p < 1000
            else 0.85, params, "1", "higher")
    doc["results"] = rows
    return doc


def ingest(url: str, docs: list[tuple[str, dict]]) -> None:
    from db.engine import open_db
    from db.ingest import ingest_docs

    ingest_docs(open_db(url), docs)


@pytest.fixture(scope="module")
def loaded_url(tmp_path_factory, smoke_file) -> str:
    """Committed results + the smoke run + the smoke run again, 50% slower (a regression to find)."""
    from db.validate import load_and_validate

    url = f"sqlite:///{tmp_path_factory.mktemp('dash') / 'loaded.db'}"
    docs = [(str(p), load_and_validate(str(p))) for p in committed_results()]
    smoke = load_and_validate(str(smoke_file))
    ingest(url, docs + [("smoke", smoke), ("smoke-slower", slower_copy(smoke))])
    return url


@pytest.fixture(scope="module")
def probes_url(tmp_path_factory, smoke_file) -> str:
    from db.validate import load_and_validate

    url = f"sqlite:///{tmp_path_factory.mktemp('dash') / 'probes.db'}"
    ingest(url, [("probes", probe_doc(load_and_validate(str(smoke_file))))])
    return url


@pytest.fixture
def empty_url(tmp_path) -> str:
    from db.engine import open_db

    url = f"sqlite:///{tmp_path / 'empty.db'}"
    open_db(url)
    return url


def run_page(url: str, page: str, monkeypatch, query: dict | None = None):
    """A cold run of one page of the app against url (AppTest)."""
    import streamlit as st

    monkeypatch.setenv("KWATCH_DB", url)
    st.cache_data.clear()
    at = AppTest.from_file(APP, default_timeout=120)
    if page != "health":  # the app's page list is known after a run; the default page must start fresh
        at.run()  # (its widgets read the URL on their first run only)
    at.switch_page(f"views/{page}.py")
    at.query_params.clear()  # what the first page wrote: a link to this page carries only its own
    for k, v in (query or {}).items():
        at.query_params[k] = v
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def charts(at) -> int:
    return len(at.get("plotly_chart"))


@pytest.mark.parametrize("page", PAGES)
def test_page_on_empty_database(page, empty_url, monkeypatch):
    at = run_page(empty_url, page, monkeypatch)
    if page == "cost_model":  # the calculator needs no data
        assert charts(at) == 1
    elif page == "claims":  # every registered claim is listed, none measured yet
        assert not at.error, [e.value for e in at.error]
        fig = json.loads(at.get("plotly_chart")[0].proto.spec)
        assert "pending" in fig["data"][0]["y"]
    else:
        assert charts(at) == 0
        assert any(("No " in i.value) or ("not" in i.value) for i in at.info), [i.value for i in at.info]


@pytest.mark.parametrize("page", ["health", "trends", "numerics"])
def test_page_on_database_without_schema(page, tmp_path, monkeypatch):
    run_page(f"sqlite:///{tmp_path / 'never-migrated.db'}", page, monkeypatch)


def test_health_finds_planted_regression(loaded_url, monkeypatch):
    at = run_page(loaded_url, "health", monkeypatch)
    assert charts(at) == 1
    tier = at.selectbox[0]
    if tier.value != "smoke":
        at = tier.set_value("smoke").run()
    # The planted 50% slowdown is on CPU host timers: shown as a change, never counted as a regression.
    got = {m.label: int(m.value) for m in at.metric}
    assert got["regressed"] == 0 and got["host-timer changes"] > 0
    links = at.get("page_link")
    assert links and "regressed (host timer, not gated)" in links[0].proto.label
    assert "latency_ms" in links[0].proto.label or "tflops" in links[0].proto.label
    assert " against " in links[0].proto.label  # when, and against which run


def test_trends_follows_link_query_params(loaded_url, monkeypatch):
    q = {"technique": "gemm_fp32_emulation", "impl": "triton_dot_bf16x6", "case": "m64n64k64",
         "metric": "tflops"}
    at = run_page(loaded_url, "trends", monkeypatch, q)
    assert at.selectbox(key="trend_technique").value == "gemm_fp32_emulation"
    assert at.multiselect(key="trend_impl").value == ["triton_dot_bf16x6"]
    assert at.selectbox(key="trend_metric").value == "tflops"
    assert charts(at) == 1
    fig = json.loads(at.get("plotly_chart")[0].proto.spec)
    assert sum(len(t.get("x") or []) if isinstance(t.get("x"), list) else 1 for t in fig["data"]) >= 2
    at.radio(key="trend_x").set_value("commit").run()
    assert not at.exception and charts(at) == 1


def test_compare_defaults_to_latest_against_previous(loaded_url, monkeypatch):
    at = run_page(loaded_url, "compare", monkeypatch)
    assert charts(at) == 1
    got = {m.label: int(m.value) for m in at.metric}
    assert got["regressed (host timer, not gated)"] > 0 and got["regressed"] == 0 and got["improved"] == 0


@pytest.mark.parametrize("page", PAGES)
def test_every_page_on_loaded_database(page, loaded_url, monkeypatch):
    at = run_page(loaded_url, page, monkeypatch)
    assert not at.error, [e.value for e in at.error]
    if page in ("health", "trends", "compare", "claims", "cost_model"):
        assert charts(at) >= 1


def arr(x) -> np.ndarray:
    """A Plotly JSON array (a list, or {"dtype", "bdata", "shape"} for a typed array) as numpy."""
    if isinstance(x, dict) and "bdata" in x:
        a = np.frombuffer(base64.b64decode(x["bdata"]), dtype=np.dtype(x["dtype"]))
        shape = x.get("shape")
        return a.reshape([int(n) for n in str(shape).split(",")]) if shape else a
    return np.asarray(x, dtype=float)


def test_numerics_maps_and_ulp_curves(probes_url, monkeypatch):
    at = run_page(probes_url, "numerics", monkeypatch)
    assert at.multiselect(key="num_schemes").value == ["cublas_fp32", "triton_bf16x6", "triton_bf16x9"]
    figs = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    assert len(figs) == 4  # three heat maps and the ULP curves
    bf16x6 = next(f for f in figs if f["layout"]["title"]["text"] == "triton_bf16x6")
    z = arr(bf16x6["data"][0]["z"])
    assert z[2][2] == 1.0 and z[0][0] == 0.0  # (0, 0) within fp32; (-140, -140) not
    box = bf16x6["layout"]["shapes"][0]
    assert (box["x0"], box["x1"]) == (0.5, 3.5)  # the cells of -110 .. 111 on a (-140, -110, 0, 111, 127) axis
    at.radio(key="num_metric").set_value("rel_err").run()
    assert not at.exception
    figs = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    bf16x6 = next(f for f in figs if f["layout"]["title"]["text"] == "triton_bf16x6")
    assert any(t.get("name") == "non-finite / failed" for t in bf16x6["data"])
    ulp = figs[-1]
    assert [t["name"] for t in ulp["data"]] == ["ulp_max", "ulp_p99", "ulp_p50", "ulp_mean"]


def test_retrieval_needle_maps_and_mqar(probes_url, monkeypatch):
    at = run_page(probes_url, "retrieval", monkeypatch)
    figs = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    assert len(figs) == 4  # two selectors' needle maps, MQAR recall and loss
    mean_pool = next(f for f in figs if f.get("layout", {}).get("title", {}).get("text") == "triton_mean_pool")
    z = arr(mean_pool["data"][0]["z"])
    assert len(z) == 11 and len(z[0]) == 2 and z[0][0] == 0.0 and z[1][0] == 1.0
    recall, loss = figs[-2], figs[-1]  # MQAR recall beside the non-query loss
    assert {t["name"] for t in recall["data"]} == {"dense", "mean_pool"}
    band = recall["layout"]["shapes"][0]  # the trained lengths (shapes take data units on a log axis,
    assert (band["x0"], band["x1"]) == (256, 1024)  # annotations log10 units: checked in Chromium)
    assert recall["layout"]["annotations"][0]["x"] == pytest.approx(math.log10(256))
    mean_pool = next(t for t in recall["data"] if t["name"] == "mean_pool")
    assert arr(mean_pool["y"]) == pytest.approx([0.1, 0.025, 0.00625])  # one budget, not both averaged
    assert "nonquery_loss_nats" in loss["layout"]["yaxis"]["title"]["text"]
    at.selectbox(key="ret_mqar_density").set_value(0.25).run()
    figs = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    mean_pool = next(t for t in figs[-2]["data"] if t["name"] == "mean_pool")
    assert arr(mean_pool["y"]) == pytest.approx([0.25, 0.0625, 0.015625])


def test_cost_model_shows_measured_points(probes_url, monkeypatch):
    at = run_page(probes_url, "cost_model", monkeypatch)
    figs = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    assert any(t["name"].startswith("measured on") for t in figs[0]["data"])
    assert len(figs) == 2  # the saving curve and the prefill-share bars
    from suite.techniques.prefill_cost_model.common import predicted

    at.slider(key="cost_sparsity").set_value(0.5).run()
    assert not at.exception
    want = predicted(8000, 500, 0.5)
    assert next(m for m in at.metric if m.label == "saving").value == f"{want['saving']:.1f}x"
    assert next(m for m in at.metric if m.label == "prefill share").value == f"{want['prefill_share']:.0%}"


def test_trends_marks_change_points_and_acknowledgements(loaded_url, monkeypatch):
    from datetime import datetime, timezone

    from db import queries
    from db.engine import open_db
    from db.models_ci import Acknowledgement, ChangePoint

    runs = queries.runs(loaded_url)
    smoke = runs[runs["tier"] == "smoke"].sort_values("started_at")
    later = smoke.iloc[-1]
    key = dict(technique="gemm_fp32_emulation", impl="cublas_fp32", case_id="m64n64k64", metric="latency_ms",
               hardware_key=later["hardware_key"], software_key=later["software_key"], protocol="")
    now = datetime.now(timezone.utc)
    with open_db(loaded_url)() as s, s.begin():
        cp = ChangePoint(**key, run_id=later["run_id"], run_started_at=later["started_at"], method="test",
                         before_value=1.0, after_value=1.5, rel_change=0.5, kind="regression", detected_at=now)
        s.add(cp)
        s.flush()
        s.add(Acknowledgement(**key, from_run_id=later["run_id"], from_started_at=later["started_at"],
                              change_point_id=cp.id, who="tester", why="planted", created_at=now))
    q = {"technique": "gemm_fp32_emulation", "impl": "cublas_fp32", "case": "m64n64k64", "metric": "latency_ms"}
    at = run_page(loaded_url, "trends", monkeypatch, q)
    fig = json.loads(at.get("plotly_chart")[0].proto.spec)
    dashes = sorted(sh["line"]["dash"] for sh in fig["layout"]["shapes"])
    assert dashes == ["dash", "dot"]
    texts = [a["text"] for a in fig["layout"]["annotations"]]
    assert "change +50.0%" in texts and "ack: tester" in texts
    at.radio(key="trend_x").set_value("commit").run()
    assert not at.exception
    assert len(json.loads(at.get("plotly_chart")[0].proto.spec)["layout"]["shapes"]) == 2


@pytest.mark.parametrize("page", PAGES)
def test_every_page_on_postgresql(page, pg_url, smoke_file, monkeypatch):
    """The same pages over a real PostgreSQL database (JSONB params, timezone-aware times)."""
    from db.validate import load_and_validate

    smoke = load_and_validate(str(smoke_file))
    ingest(pg_url, [("smoke", smoke), ("smoke-slower", slower_copy(smoke)), ("probes", probe_doc(smoke))])
    at = run_page(pg_url, page, monkeypatch, {"tier": "smoke"} if page == "health" else None)
    assert not at.error, [e.value for e in at.error]
    want = {"health": 1, "alerts": 0, "trends": 1, "compare": 1, "runs": 1, "numerics": 4, "retrieval": 4, "claims": 1,
            "cost_model": 2}
    assert charts(at) == want[page]
    if page == "health":
        assert int(next(m for m in at.metric if m.label == "host-timer changes").value) > 0


@pytest.fixture(scope="module")
def one_run_url(tmp_path_factory, smoke_file) -> str:
    from db.validate import load_and_validate

    url = f"sqlite:///{tmp_path_factory.mktemp('dash') / 'one.db'}"
    ingest(url, [("smoke", load_and_validate(str(smoke_file)))])
    return url


@pytest.mark.parametrize("page", PAGES)
def test_every_page_on_one_run(page, one_run_url, monkeypatch):
    at = run_page(one_run_url, page, monkeypatch, {"tier": "smoke"} if page == "health" else None)
    assert not at.error, [e.value for e in at.error]
    if page == "health":  # nothing to compare with: every series lacks a baseline
        assert {m.label: m.value for m in at.metric}["regressed"] == "0"
        assert any(i.value.startswith("Nothing compared") for i in at.info) and not at.success
        fig = json.loads(at.get("plotly_chart")[0].proto.spec)
        assert [t["name"] for t in fig["data"] if any(arr(t["x"]))] == ["first run on this machine"]
    if page == "compare":
        assert any("same run" in w.value for w in at.warning)
