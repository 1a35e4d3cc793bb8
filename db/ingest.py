"""Ingest result files: validated, idempotent (a run is stored once), all-or-nothing."""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.orm import Session

from db.models import Benchmark, Environment, Result, Run
from db.pytest_benchmark import is_pytest_benchmark, to_document
from db.run_identity import content_hash, matches_stored
from db.samples import pack
from db.validate import ResultFileError, load_and_validate, parse_time, validate
from db.verdict.identity import HOST_FIELDS
from suite.record import HARDWARE_KEYS, SOFTWARE_KEYS, UNREADABLE, key_of, read_text


@dataclass
class IngestOutcome:
    run_id: str
    stored: bool  # False when the same run was already there
    results: int
    incomplete: bool = False  # the run did not finish (killed): its file holds the jobs done by then


def _insert(session: Session, model, rows: list[dict], keys: list[str]) -> list:
    """INSERT ... ON CONFLICT (keys) DO NOTHING RETURNING the keys of the rows it inserted: a row
    another process stored meanwhile is kept (PostgreSQL waits for that process's transaction,
    then skips), on SQLite and PostgreSQL alike."""
    if not rows:
        return []
    insert = {"postgresql": pg_insert, "sqlite": sqlite_insert}[session.get_bind().dialect.name]
    stmt = insert(model).values(rows).on_conflict_do_nothing(index_elements=keys)
    return list(session.execute(stmt.returning(*(getattr(model, k) for k in keys))).all())


def _fingerprint(env: dict) -> str:
    """The hardware and software keys' fields, and the machine's (GPU UUID, VM kernel build) where recorded:
    the gate and the dashboard tell two hosts apart by the stored env (db.verdict.identity.other_host)."""
    fields = {k: env.get(k) for k in HARDWARE_KEYS + SOFTWARE_KEYS}
    fields |= {k: env[k] for k, _ in HOST_FIELDS if env.get(k)}
    return hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()


def _environments(session: Session, envs: list[dict]) -> dict[str, int]:
    """Environment ids by fingerprint, stored first where new."""
    by_fp = {_fingerprint(env): env for env in envs}
    _insert(session, Environment, [
        {"fingerprint": fp, "hardware_key": key_of(env, HARDWARE_KEYS), "software_key": key_of(env, SOFTWARE_KEYS),
         "device": env.get("device") or ("cuda" if env.get("gpu_name") else "cpu"), "raw": env,
         **{k: (str(env[k]) if env.get(k) is not None else None)
            for k in ("gpu_name", "compute_capability", "driver", "cuda", "torch", "triton", "python", "cpu")}}
        for fp, env in sorted(by_fp.items())], ["fingerprint"])
    return dict(session.execute(select(Environment.fingerprint, Environment.id)
                                .where(Environment.fingerprint.in_(list(by_fp)))).all())


def _benchmarks(session: Session, rows: list[dict]) -> dict[tuple, int]:
    """Benchmark ids by (technique, impl, case), stored first where new."""
    keys = {(r["technique"], r["impl"], r["case"]): r["params"] for r in rows}
    _insert(session, Benchmark, [{"technique": t, "impl": i, "case_id": c, "params": params}
                                 for (t, i, c), params in sorted(keys.items())], ["technique", "impl", "case_id"])
    ids: dict[tuple, int] = {}
    for technique in sorted({k[0] for k in keys}):
        for b in session.execute(select(Benchmark.technique, Benchmark.impl, Benchmark.case_id, Benchmark.id)
                                 .where(Benchmark.technique == technique)):
            ids[(b[0], b[1], b[2])] = b[3]
    return ids


def _already(session: Session, doc: dict, digest: str, name: str) -> IngestOutcome:
    run = doc["run"]
    stored = session.scalar(select(Run.content_hash).where(Run.id == run["id"]))
    if stored != digest and not matches_stored(session, doc):  # an older hash of the same rows is updated
        raise ResultFileError(f"{name}: field run.id: run {run['id']} is already stored with "
                              "different content; refusing to overwrite it")
    return IngestOutcome(run["id"], False, 0, run.get("finished_at") is None)


def ingest_doc(session: Session, doc: dict, name: str = "document", source: str = "kwatch") -> IngestOutcome:
    """Store one validated document in the session's transaction (caller commits)."""
    validate(doc, name)
    [outcome] = store_validated(session, [(name, doc, source)])
    return outcome


def store_validated(session: Session, docs: list[tuple[str, dict, str]]) -> list[IngestOutcome]:
    """Store validated (name, document, source) triples; environments, benchmarks and runs each
    inserted in sorted key order, so concurrent ingests of overlapping files wait for each other
    instead of deadlocking."""
    digests = {doc["run"]["id"]: content_hash(doc) for _, doc, _ in docs}
    known = dict(session.execute(select(Run.id, Run.content_hash).where(Run.id.in_(list(digests)))).all())
    fresh = [d for _, d, _ in docs if d["run"]["id"] not in known]
    env_ids = _environments(session, [d["run"]["env"] for d in fresh])
    bench = _benchmarks(session, [r for d in fresh for r in d["results"]])
    outcomes: dict[str, IngestOutcome] = {}
    for name, doc, source in sorted(docs, key=lambda nds: nds[1]["run"]["id"]):
        run = doc["run"]
        if run["id"] in outcomes or run["id"] in known:  # stored before, or twice in this call
            outcomes[run["id"]] = _already(session, doc, digests[run["id"]], name)
            continue
        inserted = _insert(session, Run, [dict(
            id=run["id"], started_at=parse_time(run["started_at"], "run.started_at"),
            finished_at=parse_time(run["finished_at"], "run.finished_at") if run.get("finished_at") else None,
            tier=run["tier"], reason=run["reason"], source=source, git_commit=run["git"]["commit"],
            git_branch=run["git"]["branch"], git_dirty=run["git"]["dirty"],
            git_date=parse_time(run["git"]["date"], "run.git.date") if run["git"].get("date") else None,
            environment_id=env_ids[_fingerprint(run["env"])], content_hash=digests[run["id"]],
            config=run.get("config", {}), ingested_at=datetime.now(timezone.utc))], ["id"])
        if not inserted:  # another process stored this run since `known` was read
            outcomes[run["id"]] = _already(session, doc, digests[run["id"]], name)
            continue
        session.add_all(
            Result(run_id=run["id"], benchmark_id=bench[(x["technique"], x["impl"], x["case"])], metric=x["metric"],
                   unit=x["unit"], direction=x["direction"], value=x["value"], status=x["status"],
                   error=x["error"], impl_version=x["impl_version"], impl_hash=x["impl_hash"],
                   protocol=(x["stats"] or {}).get("protocol"), params=x["params"], samples=x["samples"],
                   samples_f64=pack(x["samples"]), stats=x["stats"])
            # every row as it recorded itself: a run written before impl_hash covered the args keeps its
            # hashes (today's registry may not hold the args it ran with)
            for x in doc["results"])
        session.flush()
        outcomes[run["id"]] = IngestOutcome(run["id"], True, len(doc["results"]), run.get("finished_at") is None)
    return [outcomes[doc["run"]["id"]] for _, doc, _ in docs]


def ingest_docs(session_factory, docs: list[tuple[str, dict]], source: str = "kwatch") -> list[IngestOutcome]:
    """Ingest several (name, document) pairs in one transaction: all stored, or none."""
    for name, doc in docs:
        validate(doc, name)
    with session_factory() as session, session.begin():
        return store_validated(session, [(name, doc, source) for name, doc in docs])


def load_any(path: str | Path, stored: dict[str, str] | None = None) -> tuple[dict, str]:
    """(validated schema-1 document, source) for a KernelWatch result file or a pytest-benchmark file.
    A document whose run `stored` (run id -> content hash) holds with the same content is not
    validated again: it was when it was stored."""
    try:
        raw = json.loads(read_text(path))
    except UNREADABLE:
        return load_and_validate(path), "kwatch"  # raises ResultFileError naming the problem
    source = "kwatch"
    if is_pytest_benchmark(raw):
        if not isinstance(raw["benchmarks"], list):
            raise ResultFileError(f"{path}: field benchmarks: not a list")
        raw, source = to_document(raw, str(path)), "pytest-benchmark"
    run_id = raw.get("run", {}).get("id") if isinstance(raw, dict) and isinstance(raw.get("run"), dict) else None
    if not (stored and isinstance(run_id, str) and stored.get(run_id) == content_hash(raw)):
        validate(raw, str(path))
    return raw, source


def load_files(paths: list[str], stored: dict[str, str] | None = None) -> list[tuple[str, dict, str]]:
    """(path, validated document, source) per file; raises ResultFileError at the first bad one."""
    return [(p, *load_any(p, stored)) for p in paths]


def stored_runs(url: str | None) -> dict[str, str]:
    """Run id -> content hash of every run stored at url ({} where there is no database yet)."""
    from db.engine import NoDatabase, open_db

    try:
        factory = open_db(url, create=False)
    except NoDatabase:
        return {}
    with factory() as session:
        return dict(session.execute(select(Run.id, Run.content_hash)).all())


def ingest_files(session_factory, paths: list[str]) -> list:
    """Ingest files of either format in one transaction: all stored, or none (all read first)."""
    loaded = load_files(paths)
    with session_factory() as session, session.begin():
        return store_validated(session, loaded)
