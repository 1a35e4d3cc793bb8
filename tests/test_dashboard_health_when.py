"""Health says when and against what: per hardware the latest run (date, commit, run id) and the runs
its series were judged against; per series both runs and the kernel version (impl_hash) of each side.
On the two committed CPU smoke runs (AppTest) and on SQLite and PostgreSQL (the logic)."""
from __future__ import annotations

import pandas as pd

from tests.conftest import ROOT
from tests.test_dashboard_url_state import FILES, cpu_url, open_link  # noqa: F401  (the module fixture)


def docs():
    from db.validate import load_and_validate

    return [load_and_validate(str(ROOT / f)) for f in FILES[:2]]


def test_health_page_names_runs_commits_and_kernels(cpu_url, monkeypatch):  # noqa: F811
    from db.queries import run_results

    first, second = (d["run"] for d in docs())
    at = open_link(cpu_url, "health", monkeypatch, {"tier": "smoke"})
    judged = at.dataframe[0].value
    row = judged[judged["hardware"].str.startswith("CPU")].iloc[0]
    assert row["run"] == second["id"][:12] and row["commit"] == second["git"]["commit"][:7]
    assert row["runs in window"] == 2 and row["baseline runs"] == "1"  # text: a count, or a first run's sentence
    assert pd.Timestamp(row["baselines from"]) == pd.Timestamp(first["started_at"]).tz_localize(None)
    series = at.dataframe[1].value
    assert set(series["run"]) == {second["id"][:12]} and set(series["baseline_run"].dropna()) == {first["id"][:12]}
    stored = run_results(cpu_url, second["id"])
    hashes = {(t, i): h[:7] for t, i, h in zip(stored["technique"], stored["impl"], stored["impl_hash"]) if h}
    assert len(set(series["kernel"])) > 5
    assert all(k == hashes[(t, i)] for t, i, k in zip(series["technique"], series["impl"], series["kernel"]))
    labels = [link.proto.label for link in at.get("page_link")]
    assert labels
    for label in labels:  # each listed change: the kernel version, both runs with date, commit and id
        assert " @" in label and f"run {second['id'][:12]}" in label and f"run {first['id'][:12]}" in label, label


def test_judged_runs_on_both_databases(db_url):
    from dashboard.health import health, judged_runs
    from db.queries import runs
    from tests.test_dashboard_pages import ingest

    ingest(db_url, [(f, d) for f, d in zip(FILES, docs())])
    r = runs(db_url)
    _, series = health(db_url, r, "smoke")
    judged = judged_runs(r, "smoke", series)
    assert len(judged) == 1 and judged["baseline runs"].iloc[0] == 1
    assert (series["baseline_impl_hash"].dropna() == series.loc[series["baseline_impl_hash"].notna(), "impl_hash"]).all()


def test_reading_only_the_baselines_health_needs_picks_the_same_pairs(db_url):
    """series_index reads the runs before the window only for series still lacking an older result; on
    committed H200 nightlies whose series differ run to run it picks the pairs the full index picks."""
    from dashboard.health import pairs, series_index
    from db.queries import result_index
    from tests.test_dashboard_pages import ingest

    names = ["results/h200/history/ab_same2_head.json.gz", "results/h200/history/ab_slow2_base.json.gz"] + \
        [f"results/h200/repeats_v2/rep_{i:02d}.json.gz" for i in (11, 9, 8, 7)]
    from db.validate import load_and_validate

    loaded = [(n, load_and_validate(str(ROOT / n))) for n in names]
    ingest(db_url, loaded)
    ids = [d["run"]["id"] for _, d in loaded]
    from_before = []
    for inside, before in ((ids[:1], ids[1:]), (ids[:2], ids[2:]), ([ids[0], ids[2]], [ids[1]] + ids[3:])):
        full = result_index(db_url, inside + before)
        part = series_index(db_url, inside, before)
        assert len(part) < len(full)
        cand, base = pairs(part, inside, inside + before)
        assert (cand, base) == pairs(full, inside, inside + before) and len(base) > 0
        from_before.append(set(full.loc[full["result_id"].isin(base), "run_id"]) - set(inside))
    assert from_before[0] and len(from_before[2]) == 2  # the GEMM's baselines in one run, the others' further back
