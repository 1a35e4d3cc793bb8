"""Claims page: 'ours' with the day and run it was measured in, and the columns an engineer reads first
(claim .. run) within the page width at a 1280 px window, on the committed CPU smoke pair (AppTest)."""
from __future__ import annotations

import json

from tests.conftest import ROOT
from tests.test_dashboard_url_state import FILES, cpu_url, open_link  # noqa: F401  (the module fixture)

FIRST = ["claim", "GPU", "claimed", "ours", "status", "measured by", "claimed on", "date", "run"]
MAIN_WIDTH_1280 = 810  # px of the main column in Chromium at a 1280 px window (sidebar open), measured


def test_ours_names_day_and_run(cpu_url, monkeypatch):  # noqa: F811
    from db.validate import load_and_validate

    newest = load_and_validate(str(ROOT / FILES[1]))["run"]
    at = open_link(cpu_url, "claims", monkeypatch, {})
    df = at.dataframe[0].value
    measured = df[df["date"] != ""]
    assert len(measured) >= 2  # the exp2 polynomial and the conditional rescale are judged on the smoke run
    assert set(measured["run"]) == {newest["id"][:8]} and set(measured["date"]) == {newest["started_at"][:10]}
    # a row without a date is computed (arithmetic) or has no value of ours: every measured value names its run
    undated = df[df["date"] == ""]
    assert set(undated["run"]) <= {"", "arithmetic"}
    assert set(undated.loc[undated["run"] == "arithmetic", "GPU"]) == {"arithmetic"}
    assert (undated.loc[undated["run"] == "", "ours"].str.startswith(("—", "projection"))).all()
    assert set(measured["GPU"]) == {"CPU"}  # the smoke pair ran on the CPU, and its rows say so


def test_first_columns_fit_1280(cpu_url, monkeypatch):  # noqa: F811
    at = open_link(cpu_url, "claims", monkeypatch, {})
    assert list(at.dataframe[0].value.columns[:len(FIRST)]) == FIRST
    config = json.loads(at.dataframe[0].proto.columns)
    widths = [config[c]["width"] for c in FIRST]
    assert all(isinstance(w, int) for w in widths) and sum(widths) <= MAIN_WIDTH_1280 - 10, widths


def test_a_claim_whose_last_runs_disagree_reads_unsettled(tmp_path, monkeypatch):
    """Three stored H200 runs (reproduced, contradicted, reproduced) of one claim: the page's status
    column says 'reproduced (unsettled)'; with only the first run it says 'reproduced'."""
    import suite.claims.registry as registry
    from db.engine import open_db
    from db.ingest import ingest_docs
    from tests.test_claims_db import FP32_51, h200_doc, later

    monkeypatch.setattr(registry, "all_claims", lambda: [FP32_51])
    url = f"sqlite:///{tmp_path / 'kw.db'}"
    factory = open_db(url)
    ingest_docs(factory, [("h200", h200_doc())])
    assert list(open_link(url, "claims", monkeypatch, {}).dataframe[0].value["status"]) == ["reproduced"]
    ingest_docs(factory, [("slow", later(h200_doc(), "slow", 5, scale={("cublas_fp32", "tflops"): 0.6})),
                          ("back", later(h200_doc(), "back", 10))])
    df = open_link(url, "claims", monkeypatch, {}).dataframe[0].value
    assert list(df["status"]) == ["reproduced (unsettled)"]
    assert "unsettled: the last 3 matching runs split" in df["detail"].iloc[0]
