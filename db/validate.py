"""Validation of result files against the writer's schema (runners/result_schema.json), with errors
that name the field."""
from __future__ import annotations

import json
from datetime import datetime, timezone
from functools import lru_cache
from pathlib import Path

from jsonschema import Draft202012Validator

from runners.resultfile import SCHEMA_PATH, read_text


class ResultFileError(ValueError):
    """A result file that cannot be ingested; the message names the file and the field."""


@lru_cache(maxsize=1)
def _validator():
    schema = json.loads(SCHEMA_PATH.read_text())
    return Draft202012Validator(schema)


def _path(parts) -> str:
    out = ""
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out or "(document)"


def parse_time(value: str, field: str) -> datetime:
    """ISO-8601 timestamp -> aware datetime (naive ones are taken as UTC)."""
    try:
        t = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except (TypeError, ValueError):
        raise ResultFileError(f"{field}: {value!r} is not an ISO-8601 timestamp")
    if t.tzinfo is None:
        t = t.replace(tzinfo=timezone.utc)
    return t


def load_and_validate(path: str | Path) -> dict:
    """Read and validate a schema-1 result file; raise ResultFileError naming the first bad field."""
    try:
        text = read_text(path)
    except (OSError, EOFError) as exc:
        raise ResultFileError(f"{path}: cannot read: {getattr(exc, 'strerror', None) or exc}")
    except UnicodeDecodeError:
        raise ResultFileError(f"{path}: not a text file (a compressed result file must end in .gz)")
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ResultFileError(f"{path}: not valid JSON (truncated?): {exc.msg} at line {exc.lineno} column {exc.colno}")
    validate(doc, str(path))
    return doc


def validate(doc: dict, name: str = "document") -> None:
    """Raise ResultFileError for the first schema violation, naming its field path."""
    errors = sorted(_validator().iter_errors(doc), key=lambda e: (len(e.path), list(map(str, e.path))))
    if errors:
        e = errors[0]
        more = f" (and {len(errors) - 1} more problems)" if len(errors) > 1 else ""
        raise ResultFileError(f"{name}: field {_path(e.path)}: {e.message}{more}")
    run = doc["run"]
    parse_time(run["started_at"], f"{name}: field run.started_at")
    if run.get("finished_at"):
        parse_time(run["finished_at"], f"{name}: field run.finished_at")
