"""Ingest result files: validated, idempotent (a run is stored once), all-or-nothing."""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.orm import Session

from db.models import Benchmark, Environment, Result, Run
from db.pytest_benchmark import is_pytest_benchmark, to_document
from db.validate import ResultFileError, load_and_validate, parse_time, validate
from runners.env import HARDWARE_KEYS, SOFTWARE_KEYS, key_of
from runners.resultfile import UNREADABLE, read_text


@dataclass
class IngestOutcome:
    run_id: str
    stored: bool  # False when the same run was already there
    results: int


def content_hash(doc: dict) -> str:
    """sha256 of the canonical JSON of the document."""
    return hashlib.sha256(json.dumps(doc, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def _environment(session: Session, env: dict) -> Environment:
    fp = hashlib.sha256(json.dumps({k: env.get(k) for k in HARDWARE_KEYS + SOFTWARE_KEYS},
                                   sort_keys=True).encode()).hexdigest()
    found = session.scalar(select(Environment).where(Environment.fingerprint == fp))
    if found:
        return found
    e = Environment(fingerprint=fp, hardware_key=key_of(env, HARDWARE_KEYS),
                    software_key=key_of(env, SOFTWARE_KEYS), device=env.get("device") or
                    ("cuda" if env.get("gpu_name") else "cpu"),
                    **{k: (str(env[k]) if env.get(k) is not None else None)
                       for k in ("gpu_name", "compute_capability", "driver", "cuda", "torch",
                                 "triton", "python", "cpu")},
                    raw=env)
    session.add(e)
    session.flush()
    return e


def _benchmarks(session: Session, rows: list[dict]) -> dict[tuple, int]:
    keys = {(r["technique"], r["impl"], r["case"]): r["params"] for r in rows}
    ids: dict[tuple, int] = {}
    techniques = {k[0] for k in keys}
    for b in session.scalars(select(Benchmark).where(Benchmark.technique.in_(techniques))):
        ids[(b.technique, b.impl, b.case_id)] = b.id
    for key, params in keys.items():
        if key not in ids:
            b = Benchmark(technique=key[0], impl=key[1], case_id=key[2], params=params)
            session.add(b)
            session.flush()
            ids[key] = b.id
    return ids


def ingest_doc(session: Session, doc: dict, name: str = "document", source: str = "kwatch") -> IngestOutcome:
    """Store one validated document in the session's transaction (caller commits)."""
    validate(doc, name)
    run = doc["run"]
    digest = content_hash(doc)
    existing = session.get(Run, run["id"])
    if existing is not None:
        if existing.content_hash != digest:
            raise ResultFileError(f"{name}: field run.id: run {run['id']} is already stored with "
                                  "different content; refusing to overwrite it")
        return IngestOutcome(run["id"], False, 0)
    env = _environment(session, run["env"])
    r = Run(id=run["id"], started_at=parse_time(run["started_at"], "run.started_at"),
            finished_at=parse_time(run["finished_at"], "run.finished_at") if run.get("finished_at") else None,
            tier=run["tier"], reason=run["reason"], source=source, git_commit=run["git"]["commit"],
            git_branch=run["git"]["branch"], git_dirty=run["git"]["dirty"], environment_id=env.id,
            git_date=parse_time(run["git"]["date"], "run.git.date") if run["git"].get("date") else None,
            content_hash=digest, config=run.get("config", {}), ingested_at=datetime.now(timezone.utc))
    session.add(r)
    bench = _benchmarks(session, doc["results"])
    session.add_all(
        Result(run_id=r.id, benchmark_id=bench[(x["technique"], x["impl"], x["case"])], metric=x["metric"],
               unit=x["unit"], direction=x["direction"], value=x["value"], status=x["status"],
               error=x["error"], impl_version=x["impl_version"], impl_hash=x["impl_hash"],
               protocol=(x["stats"] or {}).get("protocol"), params=x["params"], samples=x["samples"],
               stats=x["stats"])
        for x in doc["results"])
    session.flush()
    return IngestOutcome(r.id, True, len(doc["results"]))


def ingest_docs(session_factory, docs: list[tuple[str, dict]], source: str = "kwatch") -> list[IngestOutcome]:
    """Ingest several (name, document) pairs in one transaction: all stored, or none."""
    with session_factory() as session, session.begin():
        return [ingest_doc(session, doc, name, source) for name, doc in docs]


def load_any(path: str | Path) -> tuple[dict, str]:
    """(validated schema-1 document, source) for a KernelWatch result file or a pytest-benchmark file."""
    try:
        raw = json.loads(read_text(path))
    except UNREADABLE:
        return load_and_validate(path), "kwatch"  # raises ResultFileError naming the problem
    if is_pytest_benchmark(raw):
        if not isinstance(raw["benchmarks"], list):
            raise ResultFileError(f"{path}: field benchmarks: not a list")
        doc = to_document(raw, str(path))
        validate(doc, str(path))
        return doc, "pytest-benchmark"
    validate(raw, str(path))
    return raw, "kwatch"


def ingest_files(session_factory, paths: list[str]) -> list:
    """Ingest files of either format in one transaction: all stored, or none."""
    loaded = [(p, *load_any(p)) for p in paths]
    with session_factory() as session, session.begin():
        return [ingest_doc(session, doc, p, source) for p, doc, source in loaded]
