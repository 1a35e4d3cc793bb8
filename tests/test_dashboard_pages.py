"""Every dashboard page under Streamlit's AppTest: empty database, no schema at all, and a database
loaded with the committed result files, the CPU smoke run and a later run with a planted regression."""
from __future__ import annotations

import copy
import glob
import json
import uuid
from pathlib import Path

import pytest

from tests.conftest import ROOT

APP = str(ROOT / "dashboard" / "app.py")
PAGES = ["health", "trends", "compare", "numerics", "retrieval", "claims", "cost_model"]
AppTest = pytest.importorskip("streamlit.testing.v1").AppTest


def committed_results() -> list[Path]:
    return sorted(Path(p) for p in glob.glob(str(ROOT / "results" / "**" / "*.json"), recursive=True))


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
    at.run()
    at.switch_page(f"views/{page}.py")
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
    regressed = next(m for m in at.metric if m.label == "regressed")
    assert int(regressed.value) > 0
    links = at.get("page_link")
    assert links and "regressed" in links[0].proto.label
    assert "latency_ms" in links[0].proto.label or "tflops" in links[0].proto.label


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
    assert got["regressed"] > 0 and got["improved"] == 0


@pytest.mark.parametrize("page", PAGES)
def test_every_page_on_loaded_database(page, loaded_url, monkeypatch):
    at = run_page(loaded_url, page, monkeypatch)
    assert not at.error, [e.value for e in at.error]
    if page in ("health", "trends", "compare", "claims", "cost_model"):
        assert charts(at) >= 1
