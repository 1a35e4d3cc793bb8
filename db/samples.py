"""Raw samples as a compact column: float64 little-endian bytes (results.samples_f64), beside the JSON list.

A page that judges millions of pooled samples reads them as bytes and numpy.frombuffer, not as JSON
text decoded into Python floats. A null sample (the result file allows it) is stored as NaN: every
reader of the column treats the two alike (the verdict drops both; counts keep both).
"""
from __future__ import annotations

import json
from typing import Any, Iterable, Optional

import numpy as np
import orjson

DTYPE = np.dtype("<f8")


def pack(samples: Optional[Iterable[Any]]) -> bytes:
    """A list of numbers (None allowed) as float64 little-endian bytes; None or [] gives b''."""
    return np.asarray(list(samples or []), dtype=float).astype(DTYPE, copy=False).tobytes()


def unpack(blob: Optional[bytes | memoryview]) -> np.ndarray:
    """pack's bytes as a read-only float64 array (no copy); None gives an empty array."""
    if blob is None:
        return np.empty(0, dtype=DTYPE)
    return np.frombuffer(blob, dtype=DTYPE)


def pack_json(text: Any) -> bytes:
    """pack of a stored JSON samples value: text (SQLite, or a cast), or the list a driver decoded."""
    if isinstance(text, (str, bytes)):
        try:
            text = orjson.loads(text)
        except orjson.JSONDecodeError:  # NaN literals, which only json reads
            text = json.loads(text)
    return pack(text)
