"""The interleaved A/B protocol (runners.ab: base and head alternate, round by round, in one job):
is a pair of runs one A/B, and the test on its round medians against the spread its own rounds show."""
from __future__ import annotations

import math
from typing import Optional

import numpy as np

from db.verdict.rules import Thresholds
from db.verdict.stats import Z95, Comparison, finite, mann_whitney_p, worse_of


def interleaved(base_run: Optional[dict], cand_run: Optional[dict]) -> bool:
    """Are these run headers the two sides of one interleaved A/B job (the same `ab` config)?"""
    a = ((base_run or {}).get("config") or {}).get("ab")
    b = ((cand_run or {}).get("config") or {}).get("ab")
    return bool(a) and a == b


def log_rounds(row: dict) -> list[float]:
    """Log of each round's median of a row (its value alone where it has no rounds)."""
    vals = (row.get("stats") or {}).get("round_values") or [row.get("value")]
    return [math.log(v) for v in vals if isinstance(v, (int, float)) and v > 0]


def round_spread(lb: list[float], lc: list[float], th: Thresholds = Thresholds()) -> float:
    """Relative spread of one round's median between rounds of the same code: the within-side
    variances of log round medians pooled over both sides, not below th.ab_cv_floor; th.ab_cv (the
    A/A calibration) where a side has fewer than two rounds."""
    if len(lb) < 2 or len(lc) < 2:
        return th.ab_cv
    ss = sum((x - sum(v) / len(v)) ** 2 for v in (lb, lc) for x in v)
    return max(math.sqrt(ss / (len(lb) + len(lc) - 2)), th.ab_cv_floor)


def compare_ab(base: dict, cand: dict, direction: str, th: Thresholds = Thresholds()) -> Comparison:
    """Compare the two sides of one A/B series. The change is that of the pooled samples' medians; its
    uncertainty comes from the round medians: the mean log ratio over rounds +- z x s sqrt(1/Rb + 1/Rc).
    Regressed (improved) needs p < alpha on the samples (Mann-Whitney U), a change of at least
    ab_min_effect and the interval at z = ab_z wholly on the worse (better) side; stable needs the 95%
    interval inside +-ab_min_effect, or no significance and a change under half of it."""
    b, c = finite(base.get("samples")), finite(cand.get("samples"))
    mb = float(np.median(b)) if len(b) else math.nan
    mc = float(np.median(c)) if len(c) else math.nan
    lb, lc = log_rounds(base), log_rounds(cand)
    if len(b) < th.min_samples or len(c) < th.min_samples or not mb > 0 or not lb or not lc:
        ch = (mc - mb) / mb if mb > 0 else math.nan
        return Comparison("insufficient", ch, worse_of(mc / mb if mb > 0 else math.nan, direction),
                          math.nan, math.nan, math.nan, len(b), len(c), mb, mc)
    s = round_spread(lb, lc, th)
    d = sum(lc) / len(lc) - sum(lb) / len(lb)
    se = s * math.sqrt(1 / len(lb) + 1 / len(lc))

    def interval(z: float) -> tuple[float, float]:
        return tuple(sorted(worse_of(math.exp(d + k * z * se), direction) for k in (-1, 1)))

    (g_lo, g_hi), (o_lo, o_hi) = interval(th.ab_z), interval(Z95)
    change, worse, p = (mc - mb) / mb, worse_of(mc / mb, direction), mann_whitney_p(b, c)
    significant, eff = p < th.alpha, th.ab_min_effect
    if significant and worse >= eff and g_lo > 0:
        outcome = "regressed"
    elif significant and worse <= -eff and g_hi < 0:
        outcome = "improved"
    elif -eff < o_lo and o_hi < eff:
        outcome = "stable"
    elif not significant and abs(worse) < eff / 2:
        outcome = "stable"
    else:
        outcome = "ambiguous"
    lo, hi = math.expm1(d - Z95 * se), math.expm1(d + Z95 * se)
    return Comparison(outcome, change, worse, lo, hi, p, len(b), len(c), mb, mc)


def aa_spread(base_rows: list[dict], head_rows: list[dict], th: Thresholds = Thresholds()) -> dict[str, list[dict]]:
    """An A/A run (identical code on both sides) per metric kind: for every timed series its relative
    difference of medians, its round-to-round spread s and z = mean log ratio over rounds / (s sqrt(1/Rb
    + 1/Rc)), the figures docs/verdict.md calibrates ab_cv and ab_z on."""
    from db.verdict.rules import THROUGHPUT, TIMING, metric_kind

    heads = {(r["technique"], r["impl"], r["case"], r["metric"]): r for r in head_rows}
    out: dict[str, list[dict]] = {}
    for b in base_rows:
        h = heads.get((b["technique"], b["impl"], b["case"], b["metric"]))
        kind = metric_kind(b["metric"], b.get("unit", ""))
        if h is None or kind not in (TIMING, THROUGHPUT) or "ok" != b["status"] or "ok" != h["status"]:
            continue
        lb, lc = log_rounds(b), log_rounds(h)
        s = round_spread(lb, lc, th)
        d = sum(lc) / len(lc) - sum(lb) / len(lb)
        out.setdefault(kind, []).append({"series": f"{b['impl']}/{b['case']}/{b['metric']}",
                                         "change": h["value"] / b["value"] - 1, "spread": s,
                                         "z": d / (s * math.sqrt(1 / len(lb) + 1 / len(lc)))})
    return out
