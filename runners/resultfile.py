"""The result file (schema 1): a JSON document rewritten atomically as results finish."""
from __future__ import annotations

import gzip
import json
import math
import os
import tempfile
import time
import uuid
from datetime import datetime, timezone
from pathlib import Path

# The record itself (schema, row constructor, statuses, readers) is suite.record; names re-exported for writers.
from suite.record import HASH_SCHEME, SCHEMA, SCHEMA_PATH, STATUSES, UNREADABLE, load, read_text, result_row  # noqa: F401
from suite.sample_precision import compact_row

def now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def new_run(tier: str, reason: str, git: dict, env: dict, config: dict | None = None) -> dict:
    """The run header: id, started_at, tier, reason, git, env, config (which names the impl_hash scheme)."""
    return {"id": uuid.uuid4().hex, "started_at": now_iso(), "finished_at": None, "tier": tier,
            "reason": reason, "git": git, "env": env, "config": {**(config or {}), "impl_hash": HASH_SCHEME}}


# A rewrite costs time in proportion to the file (0.7 s for a whole nightly's 21 MB of JSON on the H200
# host): rewriting after every job took 160 s of a 10-minute nightly. So a rewrite that took longer than
# CHEAP_FLUSH_S waits until the run has spent 1 / MAX_FLUSH_SHARE times as long on its jobs.
CHEAP_FLUSH_S = 0.02
MAX_FLUSH_SHARE = 0.05


class ResultFile:
    """Accumulates results and rewrites the whole file (tmp + rename) after each addition while that is
    cheap, and no more than MAX_FLUSH_SHARE of the time once it is not; `flush_pending` (called when a
    run stops, however it stops) writes what is left, so a run stopped half-way leaves a valid file
    holding every finished case; one killed outright (SIGKILL) loses at most the last few seconds' jobs."""

    def __init__(self, path: str | os.PathLike | None, run: dict) -> None:
        self.path = Path(path) if path else None
        self.doc = {"schema": SCHEMA, "run": run, "results": []}
        self._written = 0  # rows in the file on disk; the rest are pending
        self._flush_s, self._flushed_at = 0.0, time.monotonic()
        self.flush()

    @property
    def results(self) -> list[dict]:
        return self.doc["results"]

    def add(self, rows: list[dict]) -> None:
        # a signal while copying leaves the document as it was; timed samples kept at the timer's precision
        new = [compact_row(finite(r)) for r in rows]
        self.doc["results"].extend(new)
        if self._flush_s < CHEAP_FLUSH_S or time.monotonic() - self._flushed_at >= self._flush_s / MAX_FLUSH_SHARE:
            self.flush()

    def flush_pending(self) -> None:
        """Write rows added since the last rewrite, if any."""
        if len(self.doc["results"]) != self._written:
            self.flush()

    def finish(self, env_after: dict | None = None) -> None:
        self.doc["run"]["finished_at"] = now_iso()
        if env_after:
            self.doc["run"]["env_after"] = env_after
        self.flush(final=True)

    def flush(self, final: bool = False) -> None:
        if self.path is None:
            return
        t0 = time.monotonic()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".kw-", suffix=".json")
        try:
            data = encode(self.doc, self.path.suffix == ".gz", final)
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; a result file is shared like any other
            os.replace(tmp, self.path)
        except BaseException:  # a signal mid-rewrite: no stray temporary file, and the rows stay pending
            Path(tmp).unlink(missing_ok=True)
            raise
        self._written = len(self.doc["results"])
        self._flushed_at = time.monotonic()
        self._flush_s = self._flushed_at - t0


def encode(doc: dict, gz: bool, final: bool = True) -> bytes:
    """The bytes of a result file: JSON, gzipped where gz. Rewrites during a run compress fast (level 1:
    0.1 s for a whole nightly's 21 MB); a finished file as small as gzip gets it (level 9: ~16% smaller,
    ~0.3 s once)."""
    text = json.dumps(doc, allow_nan=False, default=_jsonable).encode()
    return gzip.compress(text, compresslevel=9 if final else 1, mtime=0) if gz else text


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _jsonable(obj):
    return str(obj)


def finite(obj):
    """Copy of obj with NaN and +-inf floats replaced by None (JSON has no such numbers)."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [finite(v) for v in obj]
    return obj
