"""Baseline vs candidate per series, with the gate's rules (ci/gate_compare.py, default thresholds).

The dashboard imports db only, so the rules are restated here over db.queries frames:
- candidate errored / failed correctness -> "errored" / "failed correctness"; skipped -> insufficient data;
- no baseline row for the series -> "missing baseline"; baseline not ok but candidate ok -> "improved";
- timing metrics: two-sided Mann-Whitney U on the raw samples (normal approximation with tie and
  continuity corrections, vectorised: the gate calls scipy and adds a bootstrap CI, which a page
  over every series cannot afford) p < ALPHA and |median change| >= MIN_EFFECT, each side >= MIN_SAMPLES;
- error metrics (rel_err, ulp_*, ...): above the stored tolerance -> failed correctness, else
  beyond baseline x (1 + ACCURACY_SLACK) -> regressed/improved;
- retrieval metrics (recall, ...): may not fall at all.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from suite.registry import known_failure

ALPHA, MIN_EFFECT, MIN_SAMPLES, ACCURACY_SLACK = 0.01, 0.05, 5, 0.25
ERROR_PREFIXES = ("rel_err", "abs_err", "ulp", "max_err", "mean_err")
RETRIEVAL_PREFIXES = ("recall", "accuracy", "hit_rate", "precision", "success")
FAILING = ("errored", "failed correctness")
ORDER = ["failed correctness", "errored", "regressed", "improved", "stable", "insufficient data",
         "missing baseline"]
KEY = ["technique", "impl", "case_id", "metric", "protocol"]
COLUMNS = KEY + ["unit", "direction", "status", "new_failure", "baseline", "candidate", "rel_change", "p_value",
                 "n_baseline", "n_candidate", "benchmark_id", "reason"]


def metric_kind(metric: str) -> str:
    """'error', 'retrieval' or 'timing' (the gate's classification by name)."""
    m = metric.lower()
    if m.startswith(ERROR_PREFIXES) or m.endswith(("_err", "_error")):
        return "error"
    return "retrieval" if m.startswith(RETRIEVAL_PREFIXES) else "timing"


def finite(xs) -> np.ndarray:
    a = np.asarray([x for x in (xs or []) if x is not None], dtype=float)
    return a[np.isfinite(a)]


def median(a: np.ndarray) -> float:
    """Median of a non-empty 1-d array (np.median's overhead dominates on small arrays)."""
    s, n = np.sort(a), len(a)
    return float(s[n // 2]) if n % 2 else float((s[n // 2 - 1] + s[n // 2]) / 2)


def records(df: pd.DataFrame) -> list[dict]:
    """df's rows as dicts, fast (DataFrame.to_dict boxes every cell)."""
    cols = list(df.columns)
    return [dict(zip(cols, vals)) for vals in zip(*(df[c].tolist() for c in cols))]


def mann_whitney_p(b: np.ndarray, c: np.ndarray) -> float:
    """Two-sided Mann-Whitney U p-value, normal approximation with tie and continuity corrections."""
    n1, n2 = len(b), len(c)
    bs = np.sort(b)
    # U of the candidate: pairs with b < c, plus half of the ties.
    u = (np.searchsorted(bs, c, "left").sum() + np.searchsorted(bs, c, "right").sum()) / 2.0
    s = np.sort(np.concatenate([b, c]))
    edges = np.concatenate(([True], s[1:] != s[:-1], [True]))
    ties = np.diff(np.flatnonzero(edges))  # sizes of runs of equal values
    n = n1 + n2
    var = n1 * n2 / 12.0 * ((n + 1) - float((ties ** 3 - ties).sum()) / (n * (n - 1)))
    if var <= 0:
        return 1.0
    z = max(abs(u - n1 * n2 / 2.0) - 0.5, 0.0) / math.sqrt(var)
    return math.erfc(z / math.sqrt(2.0))


def _timing(row: dict, b: np.ndarray, c: np.ndarray, direction: str) -> None:
    mb = median(b) if len(b) else math.nan
    if len(b) < MIN_SAMPLES or len(c) < MIN_SAMPLES or not mb > 0:
        row.update(status="insufficient data", reason=f"too few samples ({len(b)}, {len(c)})")
        return
    mc = median(c)
    p = mann_whitney_p(b, c)
    change = (mc - mb) / mb
    row.update(baseline=mb, candidate=mc, rel_change=change, p_value=p, status="stable",
               reason=f"Mann-Whitney p={p:.2g}, median change {change:+.2%}")
    if p < ALPHA and abs(change) >= MIN_EFFECT:
        worse = change > 0 if direction == "lower" else change < 0
        row["status"] = "regressed" if worse else "improved"


def _error(row: dict, base: dict, cand: dict) -> None:
    b, c = base["value"], cand["value"]
    row.update(baseline=b, candidate=c, rel_change=(c - b) / b if b else math.nan)
    tol = cand.get("tolerance")
    if isinstance(tol, (int, float)) and not math.isnan(tol) and c > tol:
        row.update(status="failed correctness", reason=f"error {c:.3g} above tolerance {tol:.3g}")
    elif c > b * (1 + ACCURACY_SLACK):
        row.update(status="regressed", reason=f"error {c:.3g} above {b:.3g} x {1 + ACCURACY_SLACK}")
    elif b > 0 and c < b / (1 + ACCURACY_SLACK):
        row.update(status="improved", reason=f"error {c:.3g} below {b:.3g} / {1 + ACCURACY_SLACK}")
    else:
        row.update(status="stable", reason="error within the baseline's band")


def _retrieval(row: dict, b: float, c: float, direction: str) -> None:
    worse = (b - c) if direction == "higher" else (c - b)
    row.update(baseline=b, candidate=c, rel_change=(c - b) / b if b else math.nan,
               status="regressed" if worse > 1e-9 else ("improved" if worse < -1e-9 else "stable"),
               reason="may not fall")


def judge(base: dict | None, cand: dict) -> dict:
    """The verdict on one candidate row (a POINT_COLUMNS record) against its baseline row or None."""
    row = {**{k: cand[k] for k in KEY}, "unit": cand["unit"], "direction": cand["direction"],
           "benchmark_id": cand["benchmark_id"], "baseline": math.nan, "candidate": cand["value"],
           "rel_change": math.nan, "p_value": math.nan, "reason": cand.get("error") or "",
           "n_baseline": len(base["samples"] or []) if base else 0, "n_candidate": len(cand["samples"] or [])}
    ok = lambda r: r["status"] == "ok" and r["value"] is not None and not pd.isna(r["value"])  # noqa: E731
    if cand["status"] == "error":
        row["status"] = "errored"
    elif cand["status"] == "failed_correctness":
        row["status"] = "failed correctness"
    elif not ok(cand):
        row["status"] = "insufficient data"
    elif base is None:
        row["status"] = "missing baseline"
    elif not ok(base):
        row.update(status="improved", reason=f"baseline was {base['status']}, candidate passes")
    elif (kind := metric_kind(cand["metric"])) == "timing":
        _timing(row, finite(base["samples"]), finite(cand["samples"]), cand["direction"])
    elif kind == "error":
        _error(row, base, cand)
    else:
        _retrieval(row, float(base["value"]), float(cand["value"]), cand["direction"])
    # A failure is new unless the baseline failed the same way (a sweep's known non-finite corners).
    # Known-wrong implementations and probe points (e.g. sweep corners outside a scheme's range) are
    # measurements, never new failures.
    row["new_failure"] = row["status"] in FAILING and not (
        base is not None and cand["status"] != "ok" and base["status"] == cand["status"]) and not (
        cand["status"] == "failed_correctness" and known_failure(cand["technique"], cand["impl"], cand["case_id"]))
    return row


def sort_worst_first(df: pd.DataFrame) -> pd.DataFrame:
    """New failures, then regressions (largest change first), then failures the baseline had too, ..."""
    rank = df["status"].map({s: i for i, s in enumerate(ORDER)}).fillna(len(ORDER)).astype(float)
    known = df["status"].isin(FAILING) & ~df["new_failure"].fillna(False).astype(bool)
    rank[known] = ORDER.index("regressed") + 0.5
    return (df.assign(_r=rank, _b=-df["rel_change"].abs().fillna(0)).sort_values(["_r", "_b"], kind="stable")
            .drop(columns=["_r", "_b"]).reset_index(drop=True))


def compare(baseline: pd.DataFrame, candidate: pd.DataFrame) -> pd.DataFrame:
    """One row per series of the candidate run (POINT_COLUMNS frames in): COLUMNS, worst first."""
    if candidate.empty:
        return pd.DataFrame(columns=COLUMNS)
    fill = lambda df: df.assign(protocol=df["protocol"].fillna("")) if not df.empty else df  # noqa: E731
    base_by_key = {tuple(r[k] for k in KEY): r for r in records(fill(baseline))}
    rows = [judge(base_by_key.get(tuple(r[k] for k in KEY)), r) for r in records(fill(candidate))]
    return sort_worst_first(pd.DataFrame(rows, columns=COLUMNS))


def counts(compared: pd.DataFrame) -> dict[str, int]:
    """Series per status, in ORDER (zeros included)."""
    vc = compared["status"].value_counts() if not compared.empty else {}
    return {s: int(vc.get(s, 0)) for s in ORDER}
