"""Claims page: 'ours' with the day and run it was measured in, and the columns an engineer reads first
(claim .. run) within the page width at a 1280 px window, on the committed CPU smoke pair (AppTest)."""
from __future__ import annotations

import json

from tests.conftest import ROOT
from tests.test_dashboard_url_state import FILES, cpu_url, open_link  # noqa: F401  (the module fixture)

FIRST = ["claim", "claimed", "ours", "status", "measured by", "hardware", "band", "date", "run"]
MAIN_WIDTH_1280 = 810  # px of the main column in Chromium at a 1280 px window (sidebar open), measured


def test_ours_names_day_and_run(cpu_url, monkeypatch):  # noqa: F811
    from db.validate import load_and_validate

    newest = load_and_validate(str(ROOT / FILES[1]))["run"]
    at = open_link(cpu_url, "claims", monkeypatch, {})
    df = at.dataframe[0].value
    measured = df[df["date"] != ""]
    assert len(measured) >= 2  # the exp2 polynomial and the conditional rescale are judged on the smoke run
    assert set(measured["run"]) == {newest["id"][:8]} and set(measured["date"]) == {newest["started_at"][:10]}
    assert (df.loc[df["date"] == "", "run"] == "").all()


def test_first_columns_fit_1280(cpu_url, monkeypatch):  # noqa: F811
    at = open_link(cpu_url, "claims", monkeypatch, {})
    assert list(at.dataframe[0].value.columns[:len(FIRST)]) == FIRST
    config = json.loads(at.dataframe[0].proto.columns)
    widths = [config[c]["width"] for c in FIRST]
    assert all(isinstance(w, int) for w in widths) and sum(widths) <= MAIN_WIDTH_1280 - 10, widths
