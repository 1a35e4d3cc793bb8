"""Whether a result file is a run already stored: its content hash, and a row-by-row check for a run stored
under an older hash (before timed samples were kept at timer precision, suite.sample_precision)."""
from __future__ import annotations

import hashlib
import json
import struct
from collections import Counter

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from db.models import Benchmark, Result, Run
from suite.sample_precision import as_float32, is_timed


def _canonical_row(row: dict) -> dict:
    """A timed row's samples as their float32 bytes: the full double and its shortest decimal agree."""
    samples = row.get("samples")
    if not (is_timed(row) and isinstance(samples, list) and samples):
        return row
    try:
        return {**row, "samples": struct.pack(f"<{len(samples)}f", *samples).hex()}
    except (struct.error, TypeError, OverflowError):  # a None or a value beyond float32: as written
        return row


def content_hash(doc: dict) -> str:
    """sha256 of the canonical JSON of the document (str, 64 hex digits); timed samples count by their
    float32 value, so a file rewritten by runners.compact_results keeps its hash."""
    rows = doc.get("results") if isinstance(doc, dict) else None
    if isinstance(rows, list):
        doc = {**doc, "results": [_canonical_row(r) if isinstance(r, dict) else r for r in rows]}
    return hashlib.sha256(json.dumps(doc, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def _key_sample(x, timed: bool):
    if x is None or not timed:
        return x
    return as_float32(float(x))


def _row_key(technique, impl, case, metric, value, status, samples, timed: bool) -> tuple:
    return (technique, impl, case, metric, value, status, tuple(_key_sample(s, timed) for s in samples or []))


def matches_stored(session: Session, doc: dict) -> bool:
    """Whether the run stored under doc's run id holds the same rows (value, status, samples; timed samples
    at float32) as doc; if so its content hash is brought up to date, so the next check is one lookup."""
    run_id = doc["run"]["id"]
    stored = session.execute(
        select(Benchmark.technique, Benchmark.impl, Benchmark.case_id, Result.metric, Result.value,
               Result.status, Result.samples, Result.protocol)
        .join(Benchmark, Result.benchmark_id == Benchmark.id).where(Result.run_id == run_id)).all()
    have = Counter(_row_key(*s[:7], timed=bool(s[7])) for s in stored)
    want = Counter(_row_key(r["technique"], r["impl"], r["case"], r["metric"], r["value"], r["status"],
                            r["samples"], timed=is_timed(r)) for r in doc["results"])
    if have != want:
        return False
    session.execute(update(Run).where(Run.id == run_id).values(content_hash=content_hash(doc)))
    return True
