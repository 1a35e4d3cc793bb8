"""Compare on committed H200 runs: commit against commit reads every run of each commit (the layout-v2 nightly
is three files), a protocol change is named as the reason for missing baselines, every series with a change
is reachable in the chart's pages, and figures are formatted by kind."""
from __future__ import annotations

import math

import pytest

from db.ingest import load_any
from tests.conftest import ROOT
from tests.test_dashboard_pages import ingest, run_page

H200 = ROOT / "results" / "h200"
BASE_FILES = [H200 / "protocol_v3/v3_attn_sparse_needle.json.gz", H200 / "protocol_v3/v3_gemm_fp32_emulation.json.gz",
              H200 / "repeats_v3_full/rep_01.json.gz", H200 / "repeats_v3_full/rep_02.json.gz"]  # commit ed9c4f3
CAND_FILES = sorted((H200 / "layout_v2").glob("nightly_*.json.gz"))  # commit 68b2fdc, one nightly in 3 files
V2_FILE = H200 / "repeats_v2/rep_01.json.gz"  # commit 5c01ebd, protocol v2


def docs(paths) -> list[dict]:
    return [load_any(str(p))[0] for p in paths]


def keys(paths) -> set[tuple]:
    """(technique, impl, case, metric, protocol) of the files' ok rows that are not grid cells (the verdict
    pools needle grids and exponent sweeps into cell groups)."""
    from db.verdict.counts import is_cell

    return {(r["technique"], r["impl"], r["case"], r["metric"], (r.get("stats") or {}).get("protocol") or "")
            for d in docs(paths) for r in d["results"] if r["status"] == "ok" and not is_cell(r)}


@pytest.fixture(scope="module")
def cmp_url(tmp_path_factory) -> str:
    url = f"sqlite:///{tmp_path_factory.mktemp('compare') / 'compare.db'}"
    paths = BASE_FILES + CAND_FILES + [V2_FILE]
    ingest(url, [(str(p), d) for p, d in zip(paths, docs(paths))])
    return url


def table(at):
    return at.dataframe[0].value


def test_commit_against_commit_reads_every_run_of_each(cmp_url, monkeypatch):
    at = run_page(cmp_url, "compare", monkeypatch, {"by": "commit", "baseline": "ed9c4f3", "candidate": "68b2fdc"})
    assert not at.warning, [w.value for w in at.warning]
    t = table(at)
    base_keys, cand_keys = keys(BASE_FILES), keys(CAND_FILES)
    got = set(zip(t["technique"], t["impl"], t["case_id"], t["metric"], t["protocol"]))
    assert cand_keys <= got  # every series of the three candidate files
    missing = t[t["status"] == "missing baseline"]
    wrongly = [k for k in zip(missing["technique"], missing["impl"], missing["case_id"], missing["metric"],
                              missing["protocol"]) if k in base_keys]
    assert not wrongly, wrongly[:5]  # a series some baseline run has is never a missing baseline
    both = cand_keys & base_keys
    status = dict(zip(zip(t["technique"], t["impl"], t["case_id"], t["metric"], t["protocol"]), t["status"]))
    assert len(both) > 500 and all(status[k] != "missing baseline" for k in both)
    assert sum(status[k] in ("stable", "improved", "regressed") for k in both) > 500
    # two repeats of the baseline commit: a series they share is judged on their samples pooled
    rep = {r["technique"] + r["impl"] + r["case"]: len(r["samples"]) for r in docs(BASE_FILES[2:3])[0]["results"]
           if r["metric"] == "latency_ms" and r["status"] == "ok"}
    row = t[(t["metric"] == "latency_ms") & (t["technique"] + t["impl"] + t["case_id"]).isin(rep)].iloc[0]
    assert row["n_baseline"] > rep[row["technique"] + row["impl"] + row["case_id"]]


def test_protocol_change_is_named(cmp_url, monkeypatch):
    base_id, cand_id = docs([V2_FILE])[0]["run"]["id"], docs(BASE_FILES[2:3])[0]["run"]["id"]
    at = run_page(cmp_url, "compare", monkeypatch, {"baseline": base_id, "candidate": cand_id})
    notes = [i.value for i in at.info if "no baseline under their timing protocol" in i.value]
    assert notes and any("graph/v2" in n and "graph/v3" in n for n in notes)
    t = table(at)
    missing = t[t["status"] == "missing baseline"]
    assert len(missing) > 100
    assert all("protocol" in r and "never one series" in r for r in missing["reason"])
    assert sum(int(n.split(" series")[0]) for n in notes) == len(missing)


def test_every_series_with_a_change_is_on_a_chart_page(cmp_url, monkeypatch):
    """"With a change" counts the series the verdict judged changed (regressed or improved), not every
    series with a relative change (a stable one has one too), and each is on one of the chart's pages."""
    import json

    import db.verdict.spread as spread

    # judged on the protocols' spreads alone: the count and the paging are under test, not the shipped table
    # (with it these v3 -> layout_v2 runs have no series judged changed; on the protocol spreads, 3)
    import db.spread_history

    monkeypatch.setattr(spread, "committed", lambda: spread.SpreadTable())
    monkeypatch.setattr(db.spread_history, "committed", lambda: spread.SpreadTable())
    import streamlit as st

    st.cache_data.clear()  # the page's verdicts cached by an earlier test were judged with the table
    at = run_page(cmp_url, "compare", monkeypatch, {"by": "commit", "baseline": "ed9c4f3", "candidate": "68b2fdc"})
    t = table(at)
    judged = t["label"].str.startswith(("regressed", "improved")) & t["rel_change"].notna()
    n = int(judged.sum())
    assert 0 < n < int(t["rel_change"].notna().sum())  # stable series have a change too, and are not counted
    assert n == sum(int(m.value) for m in at.metric if m.label.startswith(("regressed", "improved")))
    pages = math.ceil(n / 60)
    caption = next(c.value for c in at.caption if c.value.startswith("Chart:"))
    assert f"series 1–{min(n, 60)} of {n} with a change" in caption
    bars = len(json.loads(at.get("plotly_chart")[0].proto.spec)["data"][0]["y"])
    assert bars == min(n, 60)
    if pages > 1:
        at.number_input(key="cmp_page").set_value(pages).run()
        last = json.loads(at.get("plotly_chart")[0].proto.spec)["data"][0]
        assert len(last["y"]) == n - 60 * (pages - 1)
        assert at.query_params["page"] in (str(pages), [str(pages)])


def test_figures_formatted_by_kind(cmp_url, monkeypatch):
    from dashboard.verdict import fmt_value

    assert fmt_value(4.440892098500626e-16, "rel_err") == "4.44e-16"
    assert fmt_value(0.0123456, "latency_ms", "ms") == "0.01235"
    assert fmt_value(0.9, "recall", "1") == "0.900"
    assert fmt_value(float("nan"), "rel_err") == "" and fmt_value(None, "tflops") == ""
    at = run_page(cmp_url, "compare", monkeypatch, {"by": "commit", "baseline": "ed9c4f3", "candidate": "68b2fdc"})
    t = table(at)
    errs = t[t["metric"].str.startswith("rel_err") & (t["candidate"] != "")]
    assert len(errs) > 10
    for v in errs["candidate"]:
        mantissa = v.split("e")[0].replace("-", "").replace(".", "").lstrip("0")
        assert len(mantissa) <= 3, v


def test_compare_permalink_round_trip(cmp_url, monkeypatch):
    from tests.test_dashboard_url_state import open_link

    at = open_link(cmp_url, "compare", monkeypatch, {})
    at.radio(key="cmp_by").set_value("commit").run()
    base_sha, cand_sha = (docs(paths[:1])[0]["run"]["git"]["commit"] for paths in (BASE_FILES, CAND_FILES))
    at.selectbox(key="cmp_base_commit").set_value(base_sha).run()
    at.selectbox(key="cmp_cand_commit").set_value(cand_sha).run()
    at.multiselect(key="cmp_status").set_value(["stable"]).run()
    link = {k: at.query_params[k] for k in at.query_params}
    assert link["by"] == "commit" and link["status"] == "stable"
    assert link["baseline"].startswith("ed9c4f3") and link["candidate"].startswith("68b2fdc")
    spec = at.get("plotly_chart")[0].proto.spec
    again = open_link(cmp_url, "compare", monkeypatch, link)
    assert not [w.value for w in again.warning]
    assert again.get("plotly_chart")[0].proto.spec == spec
    # a short commit in a link names the commit; an unknown one warns
    short = open_link(cmp_url, "compare", monkeypatch, {"by": "commit", "candidate": "68b2fdc", "baseline": "zzz"})
    assert short.selectbox(key="cmp_cand_commit").value.startswith("68b2fdc")
    assert any("zzz" in w.value for w in short.warning)


def test_reading_only_the_rows_a_verdict_needs_changes_no_verdict(cmp_url):
    """data.compared reads per series its newest row, and all rows only where several runs' samples are
    pooled against a baseline: every verdict is the one over all rows (run_results of every run); a
    candidate series with no baseline shows its newest run's value."""
    import pandas as pd

    from dashboard import data, verdict
    from db import queries
    from db.verdict import metric_kind

    runs = queries.runs(cmp_url)

    def of(sha: str) -> tuple:
        return tuple(runs[runs["git_commit"].fillna("").str.startswith(sha)]["run_id"])

    def every_row(run_ids) -> pd.DataFrame:
        return pd.concat([queries.run_results(cmp_url, r) for r in run_ids], ignore_index=True)

    pooled_missing = 0
    for b, c in (("ed9c4f3", "68b2fdc"), ("68b2fdc", "ed9c4f3"), ("5c01ebd", "ed9c4f3")):
        full = verdict.compare(every_row(of(b)), every_row(of(c))).set_index(verdict.KEY).sort_index()
        fast = data.compared(cmp_url, of(b), of(c)).set_index(verdict.KEY).sort_index()
        assert fast.index.equals(full.index) and len(full) > 100
        cols = ["status", "label", "baseline", "rel_change", "p_value", "n_baseline", "n_candidate", "reason"]
        pd.testing.assert_frame_equal(fast[cols], full[cols])
        missing = full["status"] == "missing baseline"
        pd.testing.assert_series_equal(fast.loc[~missing, "candidate"], full.loc[~missing, "candidate"])
        rows = every_row(of(c)).sort_values("started_at", kind="stable")
        rows = rows.assign(protocol=rows["protocol"].fillna(""))
        newest = rows.drop_duplicates(verdict.KEY, keep="last").set_index(verdict.KEY)["value"]
        timing = [metric_kind(m, u) in ("timing", "throughput") for m, u in zip(fast.index.get_level_values("metric"),
                                                                                 fast["unit"])]
        got = fast.loc[missing & fast["candidate"].notna() & pd.Series(timing, index=fast.index), "candidate"]
        assert len(got) and (got == newest.reindex(got.index)).all()
        repeats = rows.groupby(verdict.KEY).size()
        pooled_missing += int((repeats.reindex(got.index) > 1).sum())
    assert pooled_missing > 0  # the v3 repeats have no v3 baseline in the v2 run: their samples are not read
