"""The change-point detector that ships: online, one night at a time, seeing only past nights.

After night n, the last `confirm` nights A (the candidate new level) are compared with the nights
before them since the series' last change (the reference). An alert when both hold:
- rank: every night of A lies beyond every one of the last `history` reference nights, on one side.
  On exchangeable noise of any shape (outliers, two levels), three new nights all above the largest
  of m earlier ones have probability 1 / C(m+3, 3): 1/286 at m = 10, 1/5456 at m = 30;
- size: the median of A differs from the median of the last `window` reference nights by at least
  max(min_rel, kappa x the standard deviation of their logs); the standard deviation, unlike a
  median-based spread, grows with a minority level or with outlying nights.
- noisy floor: when the reference is too noisy for a TARGET_STEP change (its base resolution r, the
  smallest step the two rules above find within confirm - 1 nights, is above TARGET_STEP x
  (1 + floor_margin)), the median must also have moved by at least noisy_floor x r, and the reference
  must hold at least noisy_ref nights: a series the report calls too noisy alarms only on a change at
  least as large as the step its own nights resolve, and only once it has enough nights that even
  outlying nights or a level it has not shown yet alarm rarely (the rank rule's bound; a reference of
  15 quiet nights followed by 3 outlying ones cannot be told from a real change by any spread of
  those 15). Its resolution (resolution_of) is the step it shows with the floor, so the figure the
  report names is the detector's.
The change is placed at A's first night and the reference restarts there, so one change alerts once,
on its `confirm`-th night (a delay of confirm - 1 nights), and never later from the same nights.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

MIN_REL = 0.03  # the detector never reports a change under 3%
TARGET_STEP = 0.05  # the change a series must be able to show within 2 nights


@dataclass(frozen=True)
class DetectorSettings:
    confirm: int = 3  # nights of a new level before it alerts (found within confirm - 1 = 2 nights)
    min_ref: int = 15  # reference nights needed before anything alerts (chosen by kwatch detect-tune)
    window: int = 20  # reference nights whose median and spread the new level is compared with
    history: int = 60  # reference nights the new level must lie beyond (a level visited before is no change)
    min_rel: float = MIN_REL
    kappa: float = 1.0  # the size rule's multiple of the reference's standard deviation (log scale)
    noisy_floor: float = 1.0  # a too-noisy reference's minimum change, in multiples of its base resolution
    floor_margin: float = 0.1  # the floor applies when the base resolution exceeds TARGET_STEP x (1 + this)
    # a too-noisy reference (the floor applies) alarms only from this many nights on: by the rank rule
    # alone, exchangeable noise of any shape alarms at some night m >= M with probability at most
    # sum 1 / C(m+3, 3) = 3 / ((M+1)(M+2)), 0.3% at M = 30 (1.1% at 15)
    noisy_ref: int = 30

    @property
    def min_nights(self) -> int:
        """Nights a series needs before its first alert is possible."""
        return self.min_ref + self.confirm


@dataclass
class Change:
    index: int  # first night of the new level
    before: float  # median of the reference window
    after: float  # median of the new level's nights
    rel_change: float  # after / before - 1


@dataclass
class Alert:
    night: int  # the night whose evaluation raised it (index + confirm - 1)
    change: Change


def _threshold(ref_window: np.ndarray, s: DetectorSettings) -> float:
    """Smallest |log change| the size rule accepts against these reference logs."""
    sd = float(np.std(ref_window, ddof=1)) if len(ref_window) > 1 else 0.0
    return max(math.log1p(s.min_rel), s.kappa * sd)


def night_rule(logs: np.ndarray, base: int, n: int, s: DetectorSettings) -> Change | None:
    """The rule at night n: logs (float64, log of positive values) of nights 0..n at least; the reference
    starts at night `base`. Returns the change starting at n - confirm + 1, or None."""
    k = n - s.confirm + 1
    if k - base < s.min_ref:
        return None
    a = logs[k:n + 1]
    hist = logs[max(base, k - s.history):k]
    ref = logs[max(base, k - s.window):k]
    shift = float(np.median(a) - np.median(ref))
    thr = _threshold(ref, s)
    if not ((a.min() > hist.max() and shift >= thr) or (a.max() < hist.min() and -shift >= thr)):
        return None
    floor = _floor(hist, s)
    if floor and (len(hist) < s.noisy_ref or abs(shift) < floor):
        return None
    before, after = math.exp(float(np.median(ref))), math.exp(float(np.median(a)))
    return Change(k, before, after, after / before - 1.0)


def online_changes(values: list[float], s: DetectorSettings = DetectorSettings(), start: int = 0) -> list[Alert]:
    """Replay a positive series (oldest first) night by night; the alerts raised on nights >= start.
    Each night sees only itself and the nights before it."""
    x = np.asarray(values, dtype=float)
    if np.any(~np.isfinite(x)) or np.any(x <= 0):
        raise ValueError("online_changes needs finite positive values")
    logs = np.log(x)
    base, out = 0, []
    for n in range(len(x)):
        c = night_rule(logs, base, n, s)
        if c is not None:
            base = c.index
            if n >= start:
                out.append(Alert(n, c))
    return out


def noisy(base_resolution: float, s: DetectorSettings) -> bool:
    """Whether a reference of this base resolution (the step the rank and size rules find) is too noisy
    for a TARGET_STEP change: the one predicate of the noisy floor, noisy_ref and the report's warning."""
    return base_resolution > TARGET_STEP * (1 + s.floor_margin)


def _floor(hist: np.ndarray, s: DetectorSettings) -> float:
    """The noisy floor (log scale) of a rank reference `hist` (logs): noisy_floor x its base resolution
    when that reference is too noisy (noisy), else 0."""
    r = _resolution(hist, s, 0.0)
    return math.log1p(s.noisy_floor * r) if noisy(r, s) else 0.0


def _resolution(logs: np.ndarray, s: DetectorSettings, floor: float, recall: float = 0.95,
                draws: int = 2000) -> float:
    """Smallest relative step found within confirm - 1 nights with probability >= recall against the
    rank reference `logs` (its last `window` the size reference), with an extra size floor (log scale)."""
    ref = logs[-s.window:]
    thr = max(_threshold(ref, s), floor)
    a = np.random.default_rng(0).choice(logs, (draws, s.confirm))
    lo_a, med_a = a.min(axis=1), np.median(a, axis=1)
    top, mid = logs.max(), float(np.median(ref))

    def found(step: float) -> bool:
        ls = math.log1p(step)
        return float(np.mean((lo_a + ls > top) & (med_a + ls - mid >= thr))) >= recall

    lo, hi = s.min_rel, 0.05
    if found(lo):
        return lo
    while not found(hi):  # the step doubles until found (bounded: the range of the nights suffices)
        lo, hi = hi, 2 * hi + 0.01
    for _ in range(30):
        mid_s = (lo + hi) / 2
        lo, hi = (lo, mid_s) if found(mid_s) else (mid_s, hi)
    return hi


def judged(values: list[float], s: DetectorSettings = DetectorSettings()) -> tuple[float, bool]:
    """Of a reference `values` (positive, its last `history` nights): its resolution (resolution_of) and
    whether the detector judges it too noisy (noisy: the floor and noisy_ref apply), from one
    computation on the same nights the detector's rank rule sees."""
    logs = np.log(np.asarray(values, dtype=float))[-s.history:]
    floor = _floor(logs, s)
    return _resolution(logs, s, floor), floor > 0


def resolution_of(values: list[float], s: DetectorSettings = DetectorSettings()) -> float:
    """Smallest relative step that a new level starting tonight shows within confirm - 1 nights in 95%
    of cases, given the reference `values` (positive, its last `history` nights): the new level's nights
    are drawn from the reference's own nights (so minority levels and outliers count) times the step,
    and judged by all three rules, the noisy floor included. Deterministic (fixed draws). A reference
    judged too noisy alarms only once it holds noisy_ref nights; the figure is the step from then on."""
    return judged(values, s)[0]
