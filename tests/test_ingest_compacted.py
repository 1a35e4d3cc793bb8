"""A committed result file rewritten at timer precision is the run already stored, on SQLite and
PostgreSQL: same hash as its older form, and a database holding the older hash accepts it once and
updates the hash; a file with the same run id and a changed row is still refused."""
from __future__ import annotations

import hashlib
import json

import pytest
from sqlalchemy import select

from db.engine import open_db
from db.ingest import ingest_docs
from db.models import Run
from db.run_identity import content_hash
from db.validate import ResultFileError
from runners.compact_results import compacted
from runners.resultfile import load
from tests.conftest import ROOT
from tests.ingest_docs import loose_samples

COMMITTED = ROOT / "results" / "h200" / "serving" / "fused_norms_nightly_v4_bb7c0f1_2.json.gz"


def _legacy_hash(doc: dict) -> str:
    return hashlib.sha256(json.dumps(doc, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def test_both_forms_hash_the_same():
    doc = load(COMMITTED)
    loose = loose_samples(doc)
    assert loose != doc and compacted(loose) == doc
    assert content_hash(loose) == content_hash(doc) != _legacy_hash(doc)


def test_database_with_the_older_hash_takes_the_rewritten_file(db_url):
    factory = open_db(db_url)
    doc = load(COMMITTED)
    loose = loose_samples(doc)
    [first] = ingest_docs(factory, [("old.json", loose)])
    assert first.stored
    with factory() as s, s.begin():  # as the version before this one stored it
        s.get(Run, doc["run"]["id"]).content_hash = _legacy_hash(loose)
    [again] = ingest_docs(factory, [("new.json.gz", doc)])
    assert not again.stored and again.results == 0
    with factory() as s:
        assert s.scalar(select(Run.content_hash).where(Run.id == doc["run"]["id"])) == content_hash(doc)
    changed = json.loads(json.dumps(doc))
    timed = next(r for r in changed["results"] if r["stats"].get("protocol") and r["samples"])
    timed["samples"][0] *= 1.001  # a real difference, far beyond float32
    with factory() as s, s.begin():
        s.get(Run, doc["run"]["id"]).content_hash = _legacy_hash(loose)
    with pytest.raises(ResultFileError, match="already stored with different content"):
        ingest_docs(factory, [("changed.json", changed)])
    moved = json.loads(json.dumps(doc))
    moved["results"][0]["value"] = (moved["results"][0]["value"] or 0) + 1
    with pytest.raises(ResultFileError, match="already stored with different content"):
        ingest_docs(factory, [("moved.json", moved)])
