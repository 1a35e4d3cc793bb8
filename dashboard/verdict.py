"""Baseline vs candidate per series, noise-aware: significance and a minimum effect, both.

A series here is (technique, impl, case, metric, protocol) inside two runs. Rules, in order:
candidate errored or failed correctness -> failing; no usable baseline -> no baseline;
both sides with >= MIN_SAMPLES samples -> Mann-Whitney U (two-sided) p < ALPHA and
|median change| >= MIN_EFFECT; single values (accuracy, recall) -> |change| >= MIN_EFFECT_SINGLE.
The direction of the metric ("lower"/"higher" is better) turns a change into regressed/improved.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

ALPHA = 0.01
MIN_EFFECT = 0.03
MIN_EFFECT_SINGLE = 0.05
MIN_SAMPLES = 3
FAILING = ("error", "failed_correctness")
ORDER = ["failing", "regressed", "improved", "stable", "no baseline", "skipped"]
KEY = ["technique", "impl", "case_id", "metric", "protocol"]
COLUMNS = KEY + ["unit", "direction", "status", "baseline", "candidate", "rel_change", "p_value",
                 "n_baseline", "n_candidate", "benchmark_id", "error"]


def _numbers(samples, value) -> np.ndarray:
    xs = [float(s) for s in (samples or []) if s is not None and not math.isnan(float(s))]
    if not xs and value is not None and not pd.isna(value):
        xs = [float(value)]
    return np.asarray(xs, dtype=float)


def classify(base: np.ndarray, cand: np.ndarray, direction: str) -> tuple[str, float, float]:
    """(status, relative median change, p-value or nan) of candidate samples vs baseline samples."""
    b, c = float(np.median(base)), float(np.median(cand))
    rel = (c - b) / abs(b) if b != 0 else (0.0 if c == b else math.copysign(math.inf, c - b))
    if len(base) >= MIN_SAMPLES and len(cand) >= MIN_SAMPLES:
        from scipy.stats import mannwhitneyu

        p = float(mannwhitneyu(base, cand, alternative="two-sided").pvalue)
        changed = p < ALPHA and abs(rel) >= MIN_EFFECT
    else:
        p = math.nan
        changed = abs(rel) >= MIN_EFFECT_SINGLE
    if not changed:
        return "stable", rel, p
    worse = rel > 0 if direction == "lower" else rel < 0
    return ("regressed" if worse else "improved"), rel, p


def compare(baseline: pd.DataFrame, candidate: pd.DataFrame) -> pd.DataFrame:
    """One row per series of the candidate run (POINT_COLUMNS frames in): COLUMNS, worst first."""
    if candidate.empty:
        return pd.DataFrame(columns=COLUMNS)
    candidate = candidate.assign(protocol=candidate["protocol"].fillna(""))
    baseline = baseline.assign(protocol=baseline["protocol"].fillna("")) if not baseline.empty else baseline
    base_by_key = {tuple(r[k] for k in KEY): r for r in baseline.to_dict("records")}
    rows = []
    for r in candidate.to_dict("records"):
        key = tuple(r[k] for k in KEY)
        b = base_by_key.get(key)
        row = {**{k: r[k] for k in KEY}, "unit": r["unit"], "direction": r["direction"],
               "benchmark_id": r["benchmark_id"], "error": r["error"], "baseline": math.nan,
               "candidate": math.nan, "rel_change": math.nan, "p_value": math.nan,
               "n_baseline": 0, "n_candidate": 0}
        cand = _numbers(r["samples"], r["value"])
        row.update(candidate=float(np.median(cand)) if len(cand) else math.nan, n_candidate=len(cand))
        if r["status"] in FAILING:
            row["status"] = "failing"
        elif r["status"] != "ok" or not len(cand):
            row["status"] = "skipped"
        elif b is None or b["status"] != "ok" or not len(base := _numbers(b["samples"], b["value"])):
            row["status"] = "no baseline"
        else:
            status, rel, p = classify(base, cand, r["direction"])
            row.update(status=status, baseline=float(np.median(base)), rel_change=rel, p_value=p,
                       n_baseline=len(base))
        rows.append(row)
    out = pd.DataFrame(rows, columns=COLUMNS)
    rank = out["status"].map({s: i for i, s in enumerate(ORDER)})
    badness = -out["rel_change"].abs().fillna(0)
    return out.assign(_r=rank, _b=badness).sort_values(["_r", "_b"]).drop(columns=["_r", "_b"]).reset_index(drop=True)


def counts(compared: pd.DataFrame) -> dict[str, int]:
    """Series per status, in ORDER (zeros included)."""
    vc = compared["status"].value_counts() if not compared.empty else {}
    return {s: int(vc.get(s, 0)) for s in ORDER}
