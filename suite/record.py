"""The result record, on the ground floor every layer imports: the file schema, the row constructor, the
statuses, the implementation-hash scheme, the series-key fields of the environment, and how a stored
protocol name and a stored file are read. Runners write it, db stores and judges it, ci and the dashboard
read it; none of them defines it again."""
from __future__ import annotations

import gzip
import hashlib
import json
import os
from pathlib import Path

SCHEMA = 1
SCHEMA_PATH = Path(__file__).with_name("result_schema.json")  # the JSON schema of a result file
STATUSES = ("ok", "failed_correctness", "error", "skipped")
# Written into a run's config by the writers of implementation hashes (runners/code_hash.py); a run
# without it predates the args.
HASH_SCHEME = "closure+args/1"
HARDWARE_KEYS = ("device", "gpu_name", "compute_capability", "sm_count", "cpu")
SOFTWARE_KEYS = ("driver", "cuda", "torch", "triton", "python")
UNREADABLE = (OSError, EOFError, ValueError)  # what reading a result file can raise


def result_row(technique: str, impl: str, case: str, metric: str, unit: str, direction: str, *,
               value: float | None = None, samples=(), stats: dict | None = None, status: str = "ok",
               error: str | None = None, params: dict | None = None, impl_version: int | None = None,
               impl_hash: str | None = None, **extra) -> dict:
    """One result row with every field result_schema.json requires; `extra` fields (e.g. the counts
    behind a quality metric) are kept as given."""
    if status not in STATUSES:
        raise ValueError(f"status {status!r} is not one of {STATUSES}")
    if direction not in ("lower", "higher"):
        raise ValueError(f"direction {direction!r} is not 'lower' or 'higher'")
    return {"technique": technique, "impl": impl, "impl_version": impl_version, "impl_hash": impl_hash,
            "case": case, "params": dict(params or {}), "metric": metric, "unit": unit,
            "direction": direction, "value": value, "samples": list(samples), "stats": dict(stats or {}),
            "status": status, "error": error, **extra}


def key_of(env: dict, keys: tuple[str, ...]) -> str:
    """A short stable hash of the named fields: the hardware or software part of a series key."""
    blob = json.dumps({k: env.get(k) for k in keys}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def protocol_version(name: str | None) -> int:
    """The version of a protocol name as recorded: "cuda-events+l2flush+graph/v3" -> 3; 0 if none."""
    tail = (name or "").rpartition("/v")[2]
    return int(tail) if tail.isdigit() else 0


def read_text(path: str | os.PathLike) -> str:
    """The text of a result file; a name ending in .gz is read through gzip (raises OSError)."""
    data = Path(path).read_bytes()
    if str(path).endswith(".gz"):
        data = gzip.decompress(data)
    return data.decode()


def load(path: str | os.PathLike) -> dict:
    """Read a result file, plain or gzip-compressed (no validation; db.validate does that)."""
    return json.loads(read_text(path))


def with_args(closure_hash: str, args: dict) -> str:
    """The hash of an implementation from its closure hash and its args (no args: the closure hash)."""
    if not args:
        return closure_hash
    canonical = json.dumps(args, sort_keys=True, separators=(",", ":"), default=repr)
    return hashlib.sha256(f"{closure_hash}\0{canonical}".encode()).hexdigest()[:16]
