"""The Runs page on committed H200 result files: wall times against the nightly budget, filters from the
link, one run beside the run before it of its tier and hardware, a run without an end."""
from __future__ import annotations

import json

import pandas as pd
import pytest

from dashboard import runs
from db.run_table import run_table
from tests.conftest import ROOT
from tests.test_dashboard_pages import arr, ingest, run_page

H200 = ROOT / "results" / "h200"
FILES = ["gemm_fp32_emulation_ws_8192.json", "gemm_fp32_emulation_ws_8192_b.json",  # two nightlies, 18 s, 14 s
         "attn_dense_16k.json"]  # a full-tier run that recorded no end


@pytest.fixture(scope="module")
def runs_url(tmp_path_factory) -> str:
    from db.validate import load_and_validate

    url = f"sqlite:///{tmp_path_factory.mktemp('runs') / 'runs.db'}"
    ingest(url, [(str(H200 / f), load_and_validate(str(H200 / f))) for f in FILES])
    return url


@pytest.fixture(params=["sqlite", "postgresql"])
def both_url(request, runs_url):
    """The three runs in SQLite, or in a fresh real PostgreSQL database (timezone-aware times)."""
    if request.param == "sqlite":
        return runs_url
    from db.validate import load_and_validate

    url = request.getfixturevalue("pg_url")
    ingest(url, [(str(H200 / f), load_and_validate(str(H200 / f))) for f in FILES])
    return url


def test_run_table_counts_and_wall_time(both_url):
    t = run_table(both_url)
    t["started_at"] = pd.to_datetime(t["started_at"], utc=True)
    t = t.set_index("started_at")
    assert len(t) == 3
    b = t.loc[pd.Timestamp("2026-12-01 08:53:09", tz="UTC")]  # 08:53:09 to 08:53:23, 30 results, all ok
    assert abs(b["minutes"] - 14 / 60) < 1e-9 and b["n_results"] == 30 == b["ok"] and b["error"] == 0
    assert b["selection"] == "-t gemm_fp32_emulation -i 10 implementations -c m8192n8192k8192"
    assert t[t["tier"] == "full"].iloc[0]["selection"] == "-t attention_dense -c s16384_h32kv8_d128"
    full = t[t["tier"] == "full"].iloc[0]
    assert pd.isna(full["finished_at"]) and pd.isna(full["minutes"]) and full["n_results"] == 9


def test_over_budget_and_previous_run():
    t = pd.DataFrame({"run_id": ["a", "b", "c", "d"], "tier": ["nightly", "nightly", "nightly", "smoke"],
                      "device": ["cuda", "cuda", "cpu", "cpu"], "hardware_key": ["h", "h", "c", "c"],
                      "started_at": pd.to_datetime(["2026-01-01", "2026-01-02", "2026-01-03", "2026-01-04"]),
                      "minutes": [9.0, 11.0, 30.0, 1.0]})
    assert list(runs.over_budget(t)["run_id"]) == ["b"]  # a CPU nightly has no GPU budget
    assert runs.previous(t, "b") == "a" and runs.previous(t, "a") is None and runs.previous(t, "d") is None


def test_runs_page_draws_the_budget_and_links_the_run_before(runs_url, monkeypatch):
    at = run_page(runs_url, "runs", monkeypatch, {"tier": "nightly"})
    assert at.multiselect(key="runs_tier").value == ["nightly"]
    fig = json.loads(at.get("plotly_chart")[0].proto.spec)
    assert [tr["name"] for tr in fig["data"]] == ["nightly · NVIDIA H200"]
    assert [round(float(m), 3) for m in arr(fig["data"][0]["y"])] == [0.3, 0.233]  # 18 s, then 14 s
    line = [s for s in fig["layout"]["shapes"] if s.get("line", {}).get("dash") == "dash"]
    assert line and line[0]["y0"] == line[0]["y1"] == 10.0
    assert any("nightly budget on one GPU: 10 min" in a["text"] for a in fig["layout"]["annotations"])
    assert any("No nightly GPU run shown took longer" in c.value for c in at.caption)
    link = at.get("page_link")[0].proto  # the newest nightly, beside the one before it
    assert link.label == "Compare with the run before" and "baseline=" in link.query_string


def test_a_run_without_an_end_says_so(runs_url, monkeypatch):
    at = run_page(runs_url, "runs", monkeypatch, {"tier": "full"})
    assert any("no end recorded" in m.value and "9 results" in m.value for m in at.markdown)
    assert any("the first run of its tier" in c.value for c in at.caption)


def test_expected_failures_and_probe_points_are_not_failed_correctness(request, tmp_path):
    """A real committed H200 nightly (8,773 rows) on SQLite and PostgreSQL: its 118 rows of known-wrong
    implementations and 782 exponent-sweep probe points are stored failed_correctness, and the run table
    counts them apart; nothing else failed."""
    from db.validate import load_and_validate

    f = H200 / "nightly_v4_dce11dc.json.gz"
    doc = load_and_validate(str(f))
    for url in (f"sqlite:///{tmp_path / 'n.db'}", request.getfixturevalue("pg_url")):
        ingest(url, [(str(f), doc)])
        [row] = run_table(url).to_dict("records")
        stored = sum(1 for r in doc["results"] if r["status"] == "failed_correctness")
        assert stored == 900
        assert (row["failed_correctness"], row["expected_failure"], row["probe_point"]) == (0, 118, 782), url
        assert row["n_results"] == 8773
