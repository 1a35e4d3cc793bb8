"""Timed samples stored at the CUDA event timer's precision (float32), in their shortest decimal form.

cudaEventElapsedTime returns a float32 count of milliseconds; torch hands it over as a Python float whose
repr takes 17-19 digits ("0.02537599951028824"). The shortest decimal that rounds to the same float32
("0.025376") holds the same measurement in a third of the characters, and compresses 40 % better. For a
latency sample this is exact: the stored decimal reads back to the very float32 the timer gave. For a
sample derived from it (GB/s, TFLOP/s, share of a ceiling) and for a CPU timing it is a rounding of at
most 2^-23 relative (1.2e-7), four orders below the spread of any timed case.
"""
from __future__ import annotations

import math
import struct

_F32 = struct.Struct("<f")


def as_float32(x: float) -> float:
    """x rounded to the nearest float32, as a Python float (overflow -> inf)."""
    try:
        return _F32.unpack(_F32.pack(x))[0]
    except OverflowError:
        return math.copysign(math.inf, x)


def timer_precision(x):
    """The shortest decimal (as a float) whose float32 is x's float32; non-floats and non-finite pass."""
    if not isinstance(x, float) or not math.isfinite(x) or x == 0.0:
        return x
    target = as_float32(x)
    if not math.isfinite(target):
        return x
    for digits in range(6, 10):  # 9 significant digits always round-trip a float32
        y = float(f"{target:.{digits}g}")
        if as_float32(y) == target:
            return y
    return target


def is_timed(row: dict) -> bool:
    """A row measured under a timing protocol (its samples are times, or throughputs derived from them)."""
    return bool((row.get("stats") or {}).get("protocol"))


def compact_row(row: dict) -> dict:
    """The row with a timed row's samples at timer precision; every other field, and untimed rows, as given."""
    if not is_timed(row) or not row.get("samples"):
        return row
    return {**row, "samples": [timer_precision(s) for s in row["samples"]]}


def same_at_timer_precision(a: list, b: list) -> bool:
    """Whether two sample lists hold the same float32 values in the same order (None where either is None)."""
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if (x is None) != (y is None):
            return False
        if x is not None and as_float32(float(x)) != as_float32(float(y)):
            return False
    return True
