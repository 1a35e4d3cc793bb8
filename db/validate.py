"""Validation of result files against the writer's schema (suite/result_schema.json), with errors
that name the field."""
from __future__ import annotations

import json
import math
import re
from datetime import datetime, timezone
from functools import lru_cache
from pathlib import Path

from jsonschema import Draft202012Validator

from suite.record import SCHEMA_PATH, read_text


class ResultFileError(ValueError):
    """A result file that cannot be ingested; the message names the file and the field."""

    def __init__(self, message: str) -> None:
        super().__init__(shorten(message))


_LONG = re.compile(r"\S{121,}")


def shorten(text: str) -> str:
    """text with every run of more than 120 non-blank characters cut to its first 60 (a hostile name
    or value quoted in a message stays one readable line)."""
    return _LONG.sub(lambda m: f"{m.group()[:60]}... ({len(m.group())} characters)", text)


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
        raise ResultFileError(f"{path}: not valid JSON (truncated?): {exc.msg} (line {exc.lineno}, column {exc.colno})")
    validate(doc, str(path))
    return doc


_STR = {"technique": (1, 128), "impl": (1, 128), "case": (1, 256), "metric": (1, 64), "unit": (0, 32)}
_STATUSES = ("ok", "failed_correctness", "error", "skipped")


def _num(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _row_ok(r) -> bool:
    """True when a result row meets every rule result_schema.json sets for rows (a fast path: a
    full jsonschema pass over a 6,000-row file takes seconds)."""
    return (isinstance(r, dict)
            and all(isinstance(r.get(k), str) and lo <= len(r[k]) <= hi for k, (lo, hi) in _STR.items())
            and "impl_version" in r and (r["impl_version"] is None or (isinstance(r["impl_version"], int)
                                                                      and not isinstance(r["impl_version"], bool)))
            and "impl_hash" in r and (r["impl_hash"] is None or isinstance(r["impl_hash"], str))
            and isinstance(r.get("params"), dict) and isinstance(r.get("stats"), dict)
            and r.get("direction") in ("lower", "higher") and r.get("status") in _STATUSES
            and "value" in r and (_num(r["value"]) or (r["value"] is None and r["status"] != "ok"))
            and isinstance(r.get("samples"), list) and all(x is None or _num(x) for x in r["samples"])
            and "error" in r and (r["error"] is None or isinstance(r["error"], str)))


def validate(doc: dict, name: str = "document") -> None:
    """Raise ResultFileError for the first schema violation, naming its field path."""
    if not isinstance(doc, dict):
        raise ResultFileError(f"{name}: not a result file (a JSON {type(doc).__name__}, not an object)")
    if "schema" not in doc and "run" not in doc and "results" not in doc:
        raise ResultFileError(f"{name}: not a result file (no 'schema', 'run' or 'results' key; a study record "
                              "or another JSON document? Keys: " + ", ".join(sorted(map(str, doc))[:8]) + ")")
    if "schema" in doc and doc["schema"] != 1:
        raise ResultFileError(f"{name}: field schema: unsupported schema version {doc['schema']!r} "
                              "(this KernelWatch reads schema 1)")
    rows = doc.get("results")
    if isinstance(rows, list) and all(_row_ok(r) for r in rows):
        # Every row already meets the schema's row rules (checked fast in Python): the schema checks
        # the rest. Rows that do not are left to jsonschema, for its message naming the field.
        checked = {**doc, "results": []}
    else:
        checked = doc
    errors = sorted(_validator().iter_errors(checked), key=lambda e: (len(e.path), list(map(str, e.path))))
    if errors:
        e = errors[0]
        more = f" (and {len(errors) - 1} more problems)" if len(errors) > 1 else ""
        raise ResultFileError(f"{name}: field {_path(e.path)}: {e.message}{more}")
    run = doc["run"]
    parse_time(run["started_at"], f"{name}: field run.started_at")
    if run.get("finished_at"):
        parse_time(run["finished_at"], f"{name}: field run.finished_at")
    check_values(doc, name)


# The one policy for implausible input, the same whatever the database: refused, naming the field.
RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
PLAUSIBLE = 1e18  # no metric, sample or parameter of a kernel benchmark comes near this magnitude
TIME_UNITS = {"s", "ms", "us", "ns"}


def _bad_value(x) -> str | None:
    """Why a JSON value cannot be stored as it stands (None if it can)."""
    if isinstance(x, str):
        return "contains a NUL byte" if "\x00" in x else None
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return None
    if isinstance(x, float) and math.isnan(x):
        return "is NaN (write null for a missing value)"
    if isinstance(x, int) and abs(x) > 2**63:
        return f"is beyond the float range ({str(x)[:12]}... with {len(str(abs(x)))} digits)"
    if math.isinf(x):
        return f"is {x} (write null for a missing value)"
    if abs(x) > PLAUSIBLE:
        return f"is {x:g}, beyond any plausible measurement (|x| > {PLAUSIBLE:g})"
    return None


def _walk(x, path: list):
    """(path, value) of every scalar and every dict key inside x."""
    if isinstance(x, dict):
        for k, v in x.items():
            yield path + [k], k
            yield from _walk(v, path + [k])
    elif isinstance(x, list):
        for i, v in enumerate(x):
            yield from _walk(v, path + [i])
    else:
        yield path, x


# In the JSON text of a document (json.dumps: ", " and ": " before every value): a NUL byte, an integer
# of 19+ digits (beyond 1e18; a float never has more than 16 before its point) or a float written with an
# exponent of 18 or more (Python writes 1e16 and up with one). A text without any holds no value
# _bad_value refuses; three plain searches are faster than one alternation.
_BIG_INT = re.compile(r"[ \[]-?\d{19}")
_BIG_EXP = re.compile(r"e\+(1[89]|[2-9]\d|\d{3})")


def _plainly_fine(doc: dict) -> bool:
    """True when no value of doc can be refused (a pass in C over its JSON text: 0.4 s for a 13 MB nightly
    where _walk takes 0.7 s); False sends it to _walk, which names the field."""
    try:
        text = json.dumps(doc, allow_nan=False)  # NaN and +-Inf raise
    except (ValueError, TypeError):
        return False
    return "\\u0000" not in text and not _BIG_EXP.search(text) and not _BIG_INT.search(text)


def check_values(doc: dict, name: str = "document") -> None:
    """Refuse, naming the field: NaN, +-Inf, numbers beyond float range or 1e18, NUL bytes, negative
    times, a run id that is not a plain identifier, a run without results, duplicate rows."""
    for path, x in ([] if _plainly_fine(doc) else _walk(doc, [])):
        why = _bad_value(x)
        if why:
            if why.endswith("(write null for a missing value)") and path[0] == "results" and path[-1] == "value":
                # a row's value may be null only when its status says why there is none
                why = why.replace("(write null for a missing value)",
                                  "(write null with a status other than ok: error, failed_correctness or skipped)")
            raise ResultFileError(f"{name}: field {_path(path)}: {why}")
    run_id = doc["run"]["id"]
    if not RUN_ID.fullmatch(run_id):
        raise ResultFileError(f"{name}: field run.id: {run_id[:80]!r} is not a plain identifier "
                              "(letters, digits, '.', '_', '-'; at most 64)")
    backfill = ((doc["run"].get("config") or {}).get("backfill") or {})
    if not doc["results"] and backfill.get("status") != "import_failed":  # a commit that could not run
        raise ResultFileError(f"{name}: field results: the run has no results")
    seen: dict[tuple, int] = {}
    for i, r in enumerate(doc["results"]):
        if r["unit"] in TIME_UNITS:
            neg = [v for v in [r["value"], *r["samples"]] if v is not None and v < 0]
            if neg:
                field = "value" if r["value"] is not None and r["value"] < 0 else "samples"
                raise ResultFileError(f"{name}: field results[{i}].{field}: a negative time ({neg[0]:g} {r['unit']})")
        key = (r["technique"], r["impl"], r["case"], r["metric"])
        if key in seen:
            raise ResultFileError(f"{name}: field results[{i}]: a second row for {'/'.join(key)} "
                                  f"(first at results[{seen[key]}])")
        seen[key] = i
