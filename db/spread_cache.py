"""The spread builder's per-run values kept in a file, so a dashboard start or a new run reads only the runs
the file lacks: 0.9 s of CPU for the 297 committed runs read whole, 0.15 s once kept (2-core machine).

A run's kept values count only while its ok results are the same rows (their count, newest result id and the
run's content hash) and the code that derives them is the same (a hash of its source); anything else is read again.
"""
from __future__ import annotations

import hashlib
import logging
import os
from pathlib import Path
from typing import Optional

import orjson
from sqlalchemy import func, select
from sqlalchemy.orm import Session

import db.verdict
from db.models import Result, Run
from db.spread_history import Builder, builder_from_session

LOG = logging.getLogger("kwatch.spread_cache")
# the modules whose code decides a run's values: any edit to them makes every kept value stale
_CODE = ("db/spread_history.py", "db/verdict/__init__.py", "db/verdict/counts.py", "db/verdict/rules.py",
         "db/verdict/spread.py")
_ROOT = Path(db.verdict.__file__).resolve().parent.parent.parent


# per file, the builder this process made last, with what it was made of: (code version, runs' checks, builder)
_MEMO: dict[Path, tuple[str, dict, Builder]] = {}


def code_version() -> str:
    """sha256 (16 hex digits) of the source that derives a run's spread values."""
    h = hashlib.sha256()
    for name in _CODE:
        h.update((_ROOT / name).read_bytes())
    return h.hexdigest()[:16]


def cache_path(url: str, folder: Optional[str] = None) -> Path:
    """Where the values of the database at url are kept: $KWATCH_CACHE_DIR (else ~/.cache/kwatch), one file
    per database, named by a hash of its URL (no credentials in a file name)."""
    base = Path(folder or os.environ.get("KWATCH_CACHE_DIR") or Path.home() / ".cache" / "kwatch")
    return base / f"spreads-{hashlib.sha256(url.encode()).hexdigest()[:16]}.json"


def _load(path: Path, version: str) -> dict[str, dict]:
    try:
        doc = orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return {}
    if not isinstance(doc, dict) or doc.get("code") != version or not isinstance(doc.get("runs"), dict):
        return {}
    return doc["runs"]


def _save(path: Path, version: str, runs: dict[str, dict]) -> None:
    """Write atomically (a reader never sees half a file); a folder that cannot be written only costs speed."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_bytes(orjson.dumps({"code": version, "runs": runs}))
        os.replace(tmp, path)
    except OSError as exc:
        LOG.warning("spread values not kept (%s): the next start reads every run again", exc)
        try:
            tmp.unlink()
        except OSError:  # never written, or its folder is not one
            pass


def cached_builder(session: Session, path: Path) -> tuple[Builder, int]:
    """(builder_from_session(session)'s equal, how many runs were read from the database): runs kept in
    `path` with unchanged results are taken from it, the rest read; the file is rewritten when anything changed."""
    hashes = dict(session.execute(select(Run.id, Run.content_hash)).all())
    current = {r: [int(n), int(m), hashes.get(r)] for r, n, m in session.execute(
        select(Result.run_id, func.count(Result.id), func.max(Result.id))
        .where(Result.status == "ok").group_by(Result.run_id))}
    version = code_version()
    memo = _MEMO.get(path)
    if memo is not None and memo[0] == version and memo[1] == current:  # this process built it: nothing changed
        return memo[2], 0
    kept = _load(path, version)
    runs = {r: p for r, p in kept.items() if current.get(r) == p.get("check")}
    fresh = [r for r in current if r not in runs]
    if fresh:
        parts = builder_from_session(session, fresh).parts()
        for r in fresh:
            runs[r] = {"check": current[r], **parts.get(r, {"timing": [], "fraction": []})}
    if fresh or len(runs) != len(kept):
        _save(path, version, runs)
    b = Builder.from_parts(runs)
    _MEMO[path] = (version, current, b)
    return b, len(fresh)
