"""Result files round-trip through SQLite and PostgreSQL; ingest is idempotent and all-or-nothing."""
import json

import pytest
from sqlalchemy import func, select

from db.engine import open_db
from db.ingest import ingest_docs
from db.models import Benchmark, Result, Run
from db.validate import ResultFileError, load_and_validate


def counts(factory):
    with factory() as s:
        return tuple(s.scalar(select(func.count()).select_from(t)) for t in (Run, Result, Benchmark))


def test_round_trip_and_idempotent(db_url, smoke_file):
    factory = open_db(db_url)
    doc = load_and_validate(smoke_file)
    [first] = ingest_docs(factory, [("smoke", doc)])
    assert first.stored and first.results == len(doc["results"])
    [again] = ingest_docs(factory, [("smoke", load_and_validate(smoke_file))])
    assert not again.stored
    assert counts(factory)[:2] == (1, len(doc["results"]))
    with factory() as s:
        row = s.scalars(select(Result).join(Benchmark).where(
            Benchmark.impl == "cublas_fp32", Result.metric == "latency_ms")).first()
        src = next(r for r in doc["results"] if r["impl"] == "cublas_fp32" and r["metric"] == "latency_ms"
                   and r["case"] == row.benchmark.case_id)
        assert row.samples == src["samples"] and row.value == src["value"]
        assert row.stats["protocol"] == src["stats"]["protocol"] == row.protocol
        run = s.get(Run, doc["run"]["id"])
        assert run.environment.torch == doc["run"]["env"]["torch"]


def _mutated(smoke_file, tmp_path, mutate):
    doc = json.loads(smoke_file.read_text())
    doc["run"]["id"] = "mutated-run"
    mutate(doc)
    p = tmp_path / "bad.json"
    p.write_text(json.dumps(doc))
    return p


@pytest.mark.parametrize("mutate,field", [
    (lambda d: d["results"][3].__setitem__("value", "fast"), "results[3].value"),
    (lambda d: d["results"][0].__setitem__("status", "great"), "results[0].status"),
    (lambda d: d["run"].pop("tier"), "run"),
    (lambda d: d["run"].__setitem__("started_at", "yesterday"), "run.started_at"),
    (lambda d: d["results"][1].__setitem__("samples", "1,2,3"), "results[1].samples"),
])
def test_malformed_file_refused_naming_field_and_nothing_stored(db_url, smoke_file, tmp_path, mutate, field):
    factory = open_db(db_url)
    before = counts(factory)
    good = load_and_validate(smoke_file)
    bad = _mutated(smoke_file, tmp_path, mutate)
    with pytest.raises(ResultFileError) as exc:
        # A good file first in the same batch: it must not be stored either.
        ingest_docs(factory, [("good", good), (str(bad), load_and_validate(bad))])
    assert field in str(exc.value)
    assert counts(factory) == before


def test_truncated_file_refused(smoke_file, tmp_path):
    p = tmp_path / "trunc.json"
    p.write_text(smoke_file.read_text()[:5000])
    with pytest.raises(ResultFileError, match="not valid JSON"):
        load_and_validate(p)


def test_same_run_id_different_content_refused(db_url, smoke_file, tmp_path):
    factory = open_db(db_url)
    ingest_docs(factory, [("a", load_and_validate(smoke_file))])
    doc = json.loads(smoke_file.read_text())
    doc["results"][0]["value"] = 123.0
    with pytest.raises(ResultFileError, match="run.id"):
        ingest_docs(factory, [("b", doc)])
