"""The page-timing harness (dashboard.bench_large) builds both its databases and renders every page.

Speed is a benchmark (docs/dashboard.md), not asserted here: this checks that the harness runs, that the
synthetic database has the shape it claims, and that results_by_id reads what the full query reads.
"""
from __future__ import annotations

import sqlite3

import pandas as pd

from dashboard import bench_large
from db import queries
from db.models import Result


def test_synthetic_database_is_shaped_like_real_use(tmp_path):
    path = tmp_path / "small.db"
    n = bench_large.build(path, n_results=30_000)
    con = sqlite3.connect(path)
    assert n == con.execute("SELECT count(*) FROM results").fetchone()[0] >= 30_000
    per_day = con.execute("SELECT max(c) FROM (SELECT count(*) c FROM runs JOIN environments e "
                          "ON e.id = runs.environment_id GROUP BY e.hardware_key, substr(started_at, 1, 10))").fetchone()[0]
    assert per_day >= len(bench_large.TECHNIQUES)  # a nightly is several runs a day
    repeats = con.execute("SELECT count(*) FROM (SELECT git_commit FROM runs GROUP BY git_commit "
                          "HAVING count(*) > ?)", (len(bench_large.TECHNIQUES),)).fetchone()[0]
    assert repeats > 0  # some commits ran twice
    protocols = {r[0] for r in con.execute("SELECT DISTINCT protocol FROM results WHERE protocol IS NOT NULL")}
    assert protocols == set(bench_large.PROTOCOLS)
    assert con.execute("SELECT count(DISTINCT gpu_name) FROM environments").fetchone()[0] >= 3


def test_harness_times_every_page_on_both_databases(tmp_path, capsys):
    files = bench_large.committed_files()
    assert any(p.name.endswith(".json.gz") for p in files) and any(p.name.endswith(".json") for p in files)
    small = sorted(files, key=lambda p: p.stat().st_size)[:6]
    committed = tmp_path / "committed.db"
    assert bench_large.build_committed(committed, small) > 0
    for argv in (["--committed", "--db", str(committed)], ["--db", str(tmp_path / "syn.db"), "--results", "12000"]):
        bench_large.main(argv)
        out = capsys.readouterr().out
        assert "load average" in out
        rows = [line.split("|")[1].strip() for line in out.splitlines() if line.startswith("| ") and "---" not in line]
        assert rows[1:] == bench_large.PAGES


def test_results_by_id_reads_what_the_full_query_reads(db_url):
    """Same frame as the driver-decoded query, on SQLite and PostgreSQL (whose driver decodes JSON itself),
    over committed files with ceilings, tolerances, probe params and long sample lists."""
    from db.engine import open_db
    from db.ingest import ingest_docs
    from db.validate import load_and_validate

    files = [p for p in bench_large.committed_files() if p.name in ("ceilings_emulation.json.gz", "mqar_cpu.json")] + \
        sorted(bench_large.committed_files(), key=lambda p: p.stat().st_size)[:3]
    ingest_docs(open_db(db_url), [(str(p), load_and_validate(p)) for p in dict.fromkeys(files)])
    url = db_url
    ids = list(range(1, 30_000, 2))
    fast = queries.results_by_id(url, ids, chunk=1000)
    full = queries._points(url, queries._points_stmt(True, True).where(Result.id.in_(ids)).order_by(Result.id))
    pd.testing.assert_frame_equal(fast.sort_values("result_id", ignore_index=True), full)
    assert len(fast) > 60 and fast["samples"].map(len).max() > 10 and isinstance(fast["stats"].iloc[0], dict)
    assert fast["ceiling"].map(lambda c: isinstance(c, dict)).any()


def naive(df: pd.DataFrame) -> pd.DataFrame:
    """df with its time zone-aware columns as naive UTC (PostgreSQL's timestamptz; SQLite stores UTC)."""
    return df.assign(**{c: df[c].dt.tz_convert("UTC").dt.tz_localize(None) for c in df.columns
                        if isinstance(df[c].dtype, pd.DatetimeTZDtype)})


def test_postgres_twin_holds_the_same_rows_and_is_dropped(tmp_path):
    """bench_large --postgres: the SQLite database copied into a new PostgreSQL database reads the same
    through db.queries (runs, full result rows), every table is whole, and the database is gone afterwards."""
    import pytest
    from sqlalchemy import create_engine, text

    from dashboard import bench_pg
    from tests.conftest import PG_ADMIN, _pg_available

    if _pg_available():
        pytest.skip(_pg_available())
    path = tmp_path / "syn.db"
    bench_large.build(path, n_results=12_000)
    bench_large.detect(path)
    lite = f"sqlite:///{path}"
    with bench_pg.twin(path, PG_ADMIN) as url:
        rows = bench_pg.copy_tables(path, url)
        assert rows["results"] == sqlite3.connect(path).execute("SELECT count(*) FROM results").fetchone()[0]
        pd.testing.assert_frame_equal(naive(queries.runs(url)), queries.runs(lite))
        ids = list(range(1, rows["results"], 97))
        pd.testing.assert_frame_equal(naive(queries.results_by_id(url, ids)), queries.results_by_id(lite, ids))
        lite_db = sqlite3.connect(path)
        for t in ("benchmarks", "environments", "ci_change_points"):
            assert rows[t] == lite_db.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
        name = url.rsplit("/", 1)[1]
    admin = create_engine(PG_ADMIN)
    with admin.connect() as c:
        assert c.execute(text("SELECT count(*) FROM pg_database WHERE datname = :n"), {"n": name}).scalar() == 0
    admin.dispose()
