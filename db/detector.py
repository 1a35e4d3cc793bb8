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
  (1 + floor_margin)), every night of A must also lie noisy_floor x r beyond the reference median
  (not only A's median: a run of outlying nights mixed with a high ordinary one is no level), and A
  must be as unlikely by chance as confirm nights beyond noisy_ref reference nights: on a shorter
  reference it must hold more nights (nights_needed: 4 or 5 instead of 3). A series the report calls
  too noisy alarms only on a change at least as large as the step its own nights resolve, and outlying
  nights or a level its reference has not shown yet (which no spread of that reference can see: 17
  quiet nights, then 3 outlying ones, read as a change) alarm at most as often as the rank rule allows
  on a 30-night reference. Its resolution (resolution_of) is the step it shows with the floor (once the
  new level has the nights it needs), so the figure the report names is the detector's.
The change is placed at A's first night and the reference restarts there, so one change alerts once,
on its `confirm`-th night (a delay of confirm - 1 nights; 3-4 on a short too-noisy reference), and
never later from the same nights.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

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
    # a too-noisy reference (the floor applies) alarms only as rarely by chance as confirm nights beyond
    # a reference of this many: on a shorter one its new level must hold more nights (nights_needed)
    noisy_ref: int = 30
    # A short reference (min_short to min_ref - 1 nights: a new series, a new database, a software change)
    # is awake too: its new level must lie beyond every reference night and each of its nights beyond the
    # reference median by a Student-t prediction bound (short_q one-sided, m - 1 df) and at least short_min_rel.
    min_short: int = 5
    short_q: float = 0.995
    short_min_rel: float = 0.10
    # A step the rules missed on its nights is found later: the nights since some night k (at least
    # late_min of them) all beyond every night of the reference before k but one outlying night, by the
    # size rule (by chance: at most (1 + c) / C(m + c, c), 0.7 % at m = 5, c = 8, before the size rule).
    late_min: int = 8

    @property
    def min_nights(self) -> int:
        """Nights a series needs before its first alert is possible."""
        return self.min_short + self.confirm


@dataclass
class Change:
    index: int  # first night of the new level
    before: float  # median of the reference window
    after: float  # median of the new level's nights
    rel_change: float  # after / before - 1


@dataclass
class Alert:
    night: int  # the night whose evaluation raised it (index + confirm - 1, or later: nights_needed)
    change: Change


def _threshold(ref_window: np.ndarray, s: DetectorSettings) -> float:
    """Smallest |log change| the size rule accepts against these reference logs."""
    sd = float(np.std(ref_window, ddof=1)) if len(ref_window) > 1 else 0.0
    return max(math.log1p(s.min_rel), s.kappa * sd)


def nights_needed(m: int, s: DetectorSettings) -> int:
    """New-level nights a too-noisy reference of m nights needs: the fewest c >= confirm with
    C(m + c, c) >= C(noisy_ref + confirm, confirm), so that c nights beyond all m by chance are no more
    likely than confirm nights beyond noisy_ref (1/5456 at 30 and 3): 5 from 15-16 nights, 4 from 17-29."""
    c = s.confirm
    while math.comb(m + c, c) < math.comb(s.noisy_ref + s.confirm, s.confirm):
        c += 1
    return c


@lru_cache(maxsize=64)
def _t_quantile(q: float, df: int) -> float:
    """Student-t quantile (one per reference length, not per series-night)."""
    from scipy.stats import t as student_t  # 0.6 s to import: only where the short rule runs

    return float(student_t.ppf(q, df))


def _short_rule(logs: np.ndarray, base: int, n: int, s: DetectorSettings) -> Change | None:
    """A new level of confirm nights against a short reference (min_short to min_ref - 1 nights): every
    new night beyond every reference night and beyond the reference median by the t prediction bound."""
    k = n - s.confirm + 1
    m = k - base
    if not s.min_short <= m < s.min_ref:
        return None
    a, ref = logs[k:n + 1], logs[base:k]
    sd = float(np.std(ref, ddof=1))
    bound = max(math.log1p(s.short_min_rel), _t_quantile(s.short_q, m - 1) * sd * math.sqrt(1 + 1 / m))
    mid = float(np.median(ref))
    if not ((a.min() > ref.max() and a.min() - mid >= bound) or (a.max() < ref.min() and mid - a.max() >= bound)):
        return None
    if _floor(ref, s):  # a too-noisy short reference waits for min_ref nights and the noisy floor's rules
        return None
    before, after = math.exp(mid), math.exp(float(np.median(a)))
    return Change(k, before, after, after / before - 1.0)


def _beyond(a: np.ndarray, ref: np.ndarray) -> bool:
    """Every night of a above every night of ref but one outlying night on either side (one night of
    the new level back at the old one, or one reference night as high as the new level)."""
    return bool(np.sort(a)[1] > ref.max() or a.min() > np.sort(ref)[-2])


def late_rule(logs: np.ndarray, base: int, n: int, s: DetectorSettings) -> Change | None:
    """A level that began at some night k (at least late_min nights before n + 1, after min_short
    reference nights) and that the nightly rules missed: every night since k beyond every night of
    [base, k) but one (_beyond), by the size rule on that reference. The earliest such k."""
    for k in range(base + s.min_short, n - s.late_min + 2):
        a, ref = logs[k:n + 1], logs[base:k]
        if len(ref) < 2:
            continue
        up, down = _beyond(a, ref), _beyond(-a, -ref)
        if not (up or down):  # the rank condition first: it rules out nearly every k, medians cost more
            continue
        mid = float(np.median(ref[-s.window:]))
        shift = float(np.median(a)) - mid
        thr = max(_threshold(ref[-s.window:], s), math.log1p(TARGET_STEP) if len(ref) < s.min_ref else 0.0)
        if (up and shift >= thr) or (down and -shift >= thr):
            hist = ref[-s.history:]
            floor = _floor(hist, s)
            near = a.min() - mid if shift > 0 else mid - a.max()
            if floor and (len(a) < nights_needed(len(hist), s) or near < floor):
                continue  # a too-noisy reference: as the nightly rule, every night clears the floor, enough nights
            before, after = math.exp(mid), math.exp(float(np.median(a)))
            return Change(k, before, after, after / before - 1.0)
    return None


def night_rule(logs: np.ndarray, base: int, n: int, s: DetectorSettings) -> Change | None:
    """The rule at night n: logs (float64, log of positive values) of nights 0..n at least; the reference
    starts at night `base`. Returns the change starting at n - c + 1 (c = confirm nights of a new level;
    on a too-noisy reference, at least nights_needed), or None; on a short reference, _short_rule."""
    short = _short_rule(logs, base, n, s)
    if short is not None:
        return short
    for c in range(s.confirm, nights_needed(s.min_ref, s) + 1):
        k = n - c + 1
        if k - base < s.min_ref:
            return None
        a = logs[k:n + 1]
        hist = logs[max(base, k - s.history):k]
        ref = logs[max(base, k - s.window):k]
        shift = float(np.median(a) - np.median(ref))
        thr = _threshold(ref, s)
        if not ((a.min() > hist.max() and shift >= thr) or (a.max() < hist.min() and -shift >= thr)):
            continue
        floor = _floor(hist, s)
        if floor == 0.0 and c > s.confirm:  # a quiet reference: its new level alerts on its confirm-th night only
            continue
        # on a too-noisy reference every night of the new level, not only its median, clears the floor
        near = a.min() - np.median(ref) if shift > 0 else np.median(ref) - a.max()
        if floor and (c < nights_needed(len(hist), s) or near < floor):
            continue
        before, after = math.exp(float(np.median(ref))), math.exp(float(np.median(a)))
        return Change(k, before, after, after / before - 1.0)
    return None


def online_changes(values: list[float], s: DetectorSettings = DetectorSettings(), start: int = 0) -> list[Alert]:
    """Replay a positive series (oldest first) night by night; the alerts raised on nights >= start.
    Each night sees only itself and the nights before it."""
    x = np.asarray(values, dtype=float)
    if np.any(~np.isfinite(x)) or np.any(x <= 0):
        raise ValueError("online_changes needs finite positive values")
    logs = np.log(x)
    base, out = 0, []
    for n in range(len(x)):
        c = night_rule(logs, base, n, s) or late_rule(logs, base, n, s)
        if c is not None:
            base = c.index
            if n >= start:
                out.append(Alert(n, c))
    return out


def noisy(base_resolution: float, s: DetectorSettings) -> bool:
    """Whether a reference of this base resolution (the step the rank and size rules find) is too noisy
    for a TARGET_STEP change: the one predicate of the noisy floor, nights_needed and the report's warning."""
    return base_resolution > TARGET_STEP * (1 + s.floor_margin)


def _floor(hist: np.ndarray, s: DetectorSettings) -> float:
    """The noisy floor (log scale) of a rank reference `hist` (logs): noisy_floor x its base resolution
    when that reference is too noisy (noisy), else 0."""
    r = _resolution(hist, s, 0.0)
    return math.log1p(s.noisy_floor * r) if noisy(r, s) else 0.0


def _resolution(logs: np.ndarray, s: DetectorSettings, floor: float, recall: float = 0.95,
                draws: int = 2000) -> float:
    """Smallest relative step found within confirm - 1 nights with probability >= recall against the
    rank reference `logs` (its last `window` the size reference), with a size floor (log scale) that every
    new night must clear."""
    ref = logs[-s.window:]
    thr = _threshold(ref, s)
    a = np.random.default_rng(0).choice(logs, (draws, s.confirm))
    lo_a, med_a = a.min(axis=1), np.median(a, axis=1)
    top, mid = logs.max(), float(np.median(ref))

    def found(step: float) -> bool:
        ls = math.log1p(step)
        return float(np.mean((lo_a + ls > top) & (med_a + ls - mid >= thr) & (lo_a + ls - mid >= floor))) >= recall

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
    whether the detector judges it too noisy (noisy: the floor and nights_needed apply), from one
    computation on the same nights the detector's rank rule sees."""
    logs = np.log(np.asarray(values, dtype=float))[-s.history:]
    floor = _floor(logs, s)
    return _resolution(logs, s, floor), floor > 0


def resolution_of(values: list[float], s: DetectorSettings = DetectorSettings()) -> float:
    """Smallest relative step that a new level starting tonight shows within confirm - 1 nights in 95%
    of cases, given the reference `values` (positive, its last `history` nights): the new level's nights
    are drawn from the reference's own nights (so minority levels and outliers count) times the step,
    and judged by all three rules, the noisy floor included. Deterministic (fixed draws). On a
    too-noisy reference shorter than noisy_ref nights the new level needs nights_needed nights; the
    figure is the step it shows with them."""
    return judged(values, s)[0]
