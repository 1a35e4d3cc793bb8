"""How much a series' nightly values scatter, and the smallest change the detector can find in it."""
from __future__ import annotations

import numpy as np

# From the detector benchmark on 17 repeated H200 runs (docs/detector_benchmark.md): PELT found 5%
# steps within 2 nights in 92-99% of cases where the night CV was under 2%, and in at most 25% above.
CV_FACTOR = 2.5
MIN_REL = 0.03  # the detector never reports a change under 3% (ci.detect_core.PeltSettings.min_rel's default)
TARGET_STEP = 0.05  # the change a series must be able to show (the detector benchmark's target)
WINDOW = 20  # nights looked at


def night_cv(values: list[float]) -> float:
    """Robust relative spread of nightly values: 1.4826 x MAD / median (0 for fewer than 3)."""
    x = np.asarray([v for v in values if v is not None and v > 0], dtype=float)
    if len(x) < 3:
        return 0.0
    med = float(np.median(x))
    return float(1.4826 * np.median(np.abs(x - med)) / med)


def resolution(values: list[float], window: int = WINDOW) -> dict:
    """Of the last `window` positive values: nights, night CV, the smallest step the detector finds
    in them (max(MIN_REL, 2.5 x CV)) and whether a TARGET_STEP change would go unseen."""
    vals = [v for v in values if v is not None and v > 0][-window:]
    cv = night_cv(vals)
    step = max(MIN_REL, CV_FACTOR * cv)
    return {"nights": len(vals), "night_cv": cv, "resolvable_step": step, "too_noisy": step > TARGET_STEP}
