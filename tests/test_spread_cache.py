"""db.spread_cache: the spread builder's per-run values kept in a file give the table a full read gives,
read only what changed, and never trust a stale or broken file (SQLite and PostgreSQL, committed runs)."""
from pathlib import Path

from sqlalchemy import update
from sqlalchemy.orm import Session

from db import spread_cache
from db.engine import make_engine, open_db
from db.ingest import ingest_docs
from db.models import Run
from db.spread_cache import cache_path, cached_builder
from db.spread_history import builder_from_session, from_builder
from db.validate import load_and_validate

ROOT = Path(__file__).resolve().parent.parent
FIRST = ["results/h200/repeats_v2/rep_07.json.gz", "results/h200/repeats_v2/rep_08.json.gz",
         "results/h200/protocol_v2/v2_needle_retrieval.json.gz", "results/cpu/smoke_pair/smoke_1.json.gz"]
LATER = ["results/h200/repeats_v2/rep_09.json.gz", "results/cpu/smoke_pair/smoke_2.json.gz"]


def _ingest(url, names):
    ingest_docs(open_db(url), [(n, load_and_validate(str(ROOT / n))) for n in names])


def _same_as_full_read(session, b) -> str:
    want = from_builder(builder_from_session(session)).to_json()
    assert from_builder(b).to_json() == want
    return want


def test_kept_values_give_a_full_reads_table_and_only_new_runs_are_read(db_url, tmp_path):
    _ingest(db_url, FIRST)
    path = tmp_path / "cache" / "spreads.json"
    with Session(make_engine(db_url)) as s:
        b, read = cached_builder(s, path)
        assert read == 4 and path.is_file()
        table = from_builder(b)
        assert table.timings and table.fractions  # repeats give timing spreads, the needle grid fractions
        _same_as_full_read(s, b)
        b, read = cached_builder(s, path)
        assert read == 0
        _same_as_full_read(s, b)
    _ingest(db_url, LATER)
    with Session(make_engine(db_url)) as s:
        b, read = cached_builder(s, path)
        assert read == 2
        _same_as_full_read(s, b)
        gone = s.get(Run, load_and_validate(str(ROOT / LATER[0]))["run"]["id"])
        s.delete(gone)
        s.commit()
        b, read = cached_builder(s, path)
        assert read == 0 and gone.id not in b.runs and len(b.runs) == 5
        _same_as_full_read(s, b)
        assert gone.id not in spread_cache._load(path, spread_cache.code_version())


def test_a_changed_run_new_code_or_a_broken_file_is_read_again(sqlite_url, tmp_path, monkeypatch):
    _ingest(sqlite_url, FIRST)
    path = tmp_path / "spreads.json"
    with Session(make_engine(sqlite_url)) as s:
        assert cached_builder(s, path)[1] == 4
        one = load_and_validate(str(ROOT / FIRST[0]))["run"]["id"]
        s.execute(update(Run).where(Run.id == one).values(content_hash="changed"))
        s.commit()
        assert cached_builder(s, path)[1] == 1  # only the run whose content changed
        again = cached_builder(s, path)
        assert again[1] == 0 and again[0] is cached_builder(s, path)[0]  # kept in memory: the file is not read
        spread_cache._MEMO.clear()  # as a new process
        path.write_bytes(b'{"code": "x", "runs": {tru')
        assert cached_builder(s, path)[1] == 4
        monkeypatch.setattr(spread_cache, "code_version", lambda: "another version")
        b, read = cached_builder(s, path)
        assert read == 4
        _same_as_full_read(s, b)
        (tmp_path / "a_file").write_text("")
        b, read = cached_builder(s, tmp_path / "a_file" / "spreads.json")  # cannot be written: still a table
        assert read == 4
        _same_as_full_read(s, b)


def test_one_file_per_database_named_without_its_credentials(tmp_path):
    a = cache_path("postgresql://writer:s3cret@db.example/kw", str(tmp_path))
    b = cache_path("postgresql://writer:s3cret@db.example/other", str(tmp_path))
    assert a != b and a.parent == tmp_path and "s3cret" not in a.name and "writer" not in a.name


def test_the_database_read_learns_what_the_result_files_teach(db_url):
    """builder_from_session (protocol from SQL, params decoded once per text, only grid cells pooled) learns
    the table that add_rows learns from the same files: timings, host-timer rows left out, needle grids
    pooled into fractions."""
    import math

    from db.spread_history import from_files

    _ingest(db_url, FIRST + LATER)
    want = from_files([ROOT / n for n in FIRST + LATER])
    with Session(make_engine(db_url)) as s:
        got = from_builder(builder_from_session(s))
    assert want.timings and want.fractions and any(k[2].endswith("/grid") for k in want.fractions)
    assert got.timings.keys() == want.timings.keys() and got.fractions.keys() == want.fractions.keys()
    for mine, theirs in ((got.timings, want.timings), (got.fractions, want.fractions)):
        for k, e in theirs.items():
            assert mine[k].df == e.df and math.isclose(mine[k].ss, e.ss, rel_tol=1e-9, abs_tol=1e-12), k
