"""How much a series' nightly values scatter, and the smallest change the detector can find in it."""
from __future__ import annotations

import numpy as np

from db.detector import MIN_REL, TARGET_STEP, DetectorSettings, judged, online_changes

__all__ = ["MIN_REL", "TARGET_STEP", "night_cv", "resolution"]


def night_cv(values: list[float]) -> float:
    """Relative spread of nightly values: standard deviation / mean (0 for fewer than 3). Unlike a
    median-based spread it grows with a minority level or with outlying nights."""
    x = np.asarray([v for v in values if v is not None and v > 0], dtype=float)
    if len(x) < 3:
        return 0.0
    return float(np.std(x, ddof=1) / np.mean(x))


def reference_nights(values: list[float], s: DetectorSettings = DetectorSettings()) -> slice:
    """The nights the detector judges the next night against: those since its last alerted change, or,
    while they are fewer than s.min_ref, the reference that change was judged against."""
    starts = [0] + [a.change.index for a in online_changes(values, s)]
    if len(values) - starts[-1] >= s.min_ref or len(starts) == 1:
        return slice(starts[-1], None)
    return slice(starts[-2], starts[-1])


def resolution(values: list[float], s: DetectorSettings = DetectorSettings()) -> dict:
    """Of a series' positive nightly values (oldest first), the nights of the detector's reference
    (reference_nights, at most s.history): their count, night CV, the
    smallest step found within 2 nights from them (db.detector.resolution_of) and whether they are too
    noisy for a TARGET_STEP change: the detector's own predicate (db.detector.noisy), so a series is
    named exactly when its next alarm needs the noisy floor and more nights (nights_needed)."""
    vals = [v for v in values if v is not None and v > 0]
    ref = vals[reference_nights(vals, s)][-s.history:]
    step, noisy = judged(ref, s) if len(ref) >= 3 else (None, False)
    return {"nights": len(ref), "night_cv": night_cv(ref), "resolvable_step": step, "too_noisy": noisy}
