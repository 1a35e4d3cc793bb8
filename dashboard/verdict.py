"""Baseline vs candidate per series for the pages: db.verdict.judge (the gate's judge) over db.queries frames."""
from __future__ import annotations

import math
from itertools import chain
from typing import Optional

import numpy as np
import pandas as pd

from db.verdict import FAILING, STATUSES, Thresholds, judge, metric_kind, prepare
from db.verdict import rules as R
from db.verdict.identity import other_host
from db.verdict.pairing import pair

ORDER = list(STATUSES)
# What a page counts: the statuses, with a host-timer change that does not gate in a column of its own.
# A series of hardware whose first run of the tier this is: no baseline exists yet, which is not a gap.
FIRST_RUN = {True: "first run on this GPU", False: "first run on this machine"}
LABELS = (ORDER[:4] + [f"{s} (host timer, not gated)" for s in ("regressed", "improved")] + ORDER[4:]
          + list(FIRST_RUN.values()))
KEY = ["technique", "impl", "case_id", "metric", "protocol"]
WHEN = ["run_id", "started_at", "git_commit", "impl_hash"]  # each side's run, and the kernel version it ran
COLUMNS = KEY + ["unit", "direction", "status", "label", "gated", "new_failure", "baseline", "candidate",
                 "rel_change", "p_value", "n_baseline", "n_candidate", "k_baseline", "k_candidate", "benchmark_id",
                 "reason"] + WHEN + ["baseline_" + c for c in WHEN]


def records(df: pd.DataFrame) -> list[dict]:
    """df's rows as dicts, fast (DataFrame.to_dict boxes every cell)."""
    cols = list(df.columns)
    return [dict(zip(cols, vals)) for vals in zip(*(df[c].tolist() for c in cols))]


def _clean(x):
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else x


def _samples(samples):
    """samples as the verdict reads them: a list or a float64 array (db.samples) as it is (pooled ones
    hold 10^5 values), anything else iterable as a list."""
    if isinstance(samples, (list, np.ndarray)):
        return samples
    return list(samples if samples is not None else [])


def result_row(rec: dict) -> dict:
    """A POINT_COLUMNS record as a result-file row (what db.verdict.judge reads), its run kept beside."""
    stats = dict(rec.get("stats") or {}) if isinstance(rec.get("stats"), dict) else {}
    if _clean(rec.get("tolerance")) is not None:
        stats.setdefault("tolerance", rec["tolerance"])
    if _clean(rec.get("protocol")):
        stats.setdefault("protocol", rec["protocol"])
    return {"technique": rec["technique"], "impl": rec["impl"], "case": rec["case_id"], "metric": rec["metric"],
            "unit": rec["unit"], "direction": rec["direction"], "value": _clean(rec["value"]),
            "samples": _samples(rec.get("samples")), "stats": stats, "status": rec["status"],
            "error": _clean(rec.get("error")), "params": rec.get("params") if isinstance(rec.get("params"), dict) else {},
            "benchmark_id": rec["benchmark_id"], "hardware_key": rec.get("hardware_key") or "",
            **{w: rec.get(w) for w in WHEN}}


def _key(r: dict) -> tuple:
    return (r["technique"], r["impl"], r["case"], r["metric"], (r.get("stats") or {}).get("protocol") or "")


def _pool(parts: list):
    """Several rows' samples end to end: one float64 array where the rows hold arrays (results_by_id),
    else one list."""
    parts = [p for p in parts if p is not None]
    if parts and all(isinstance(p, np.ndarray) for p in parts):
        return np.concatenate(parts)
    return list(chain.from_iterable(parts))


def pool_runs(results: pd.DataFrame) -> pd.DataFrame:
    """Several runs' results (of one commit on one machine: a nightly written as several files, or repeats)
    as one row per series (KEY): a timing or rate series' samples pooled over its ok runs, every other
    metric its newest row; a series that failed in any run keeps its newest failed row."""
    if results.empty or not results.duplicated(KEY).any():
        return results
    return pd.DataFrame(pooled_records(results), columns=results.columns)


def pooled_records(results: pd.DataFrame) -> list[dict]:
    """pool_runs(results) as records (what compare reads: no frame built and walked again)."""
    if results.empty or not results.duplicated(KEY).any():
        return records(results)
    groups: dict = {}
    for rec in records(results.sort_values("started_at", kind="stable")):
        groups.setdefault(tuple(rec[k] for k in KEY), []).append(rec)
    rows = []
    for g in groups.values():
        bad = [r for r in g if r["status"] != "ok"]
        last = dict((bad or g)[-1])
        if len(g) > 1 and not bad and metric_kind(last["metric"], last["unit"] or "") in (R.TIMING, R.THROUGHPUT):
            pooled = _pool([r["samples"] for r in g])
            if len(pooled):
                last["samples"], last["value"] = pooled, float(np.median(pooled))
        rows.append(last)
    return rows


def pooled_ids(index: pd.DataFrame, run_ids: list[str], other: pd.DataFrame) -> tuple[list[int], list[int]]:
    """The result ids of a result_index frame (one side's runs, `run_ids` in the side's order) that
    pool_runs needs, as (rows read whole, rows of which only the samples are read): whole, per series its
    newest row (its newest failed row where one failed); samples only, every older row of a timing or rate
    series measured ok in several runs (their samples are pooled; the rest of the pooled row is its newest
    row's) where the other side's index `other` holds the series (same protocol, or either without one).
    A series the other side lacks is not compared, so its samples are not read: it keeps its newest run's row."""
    if index.empty:
        return [], []
    pos = {r: i for i, r in enumerate(run_ids)}
    # columns walked as lists: iterating a pandas (Arrow) string column boxes each cell, 10x slower
    metric_unit = list(zip(index["metric"].tolist(), index["unit"].tolist()))
    kinds = {(m, u): metric_kind(m, u or "") for m, u in set(metric_unit)}
    idx = index.assign(protocol=index["protocol"].fillna(""), _pos=index["run_id"].map(pos),
                       _bad=index["status"] != "ok", _rate=[kinds[k] in (R.TIMING, R.THROUGHPUT) for k in metric_unit])
    theirs: dict = {}
    for b, m, p in zip(other["benchmark_id"].tolist(), other["metric"].tolist(), other["protocol"].fillna("").tolist()):
        theirs.setdefault((b, m), set()).add(p)
    mine = map(theirs.get, zip(idx["benchmark_id"].tolist(), idx["metric"].tolist()), [()] * len(idx))
    paired = [bool(ps) and (p in ps or p == "" or "" in ps) for ps, p in zip(mine, idx["protocol"].tolist())]
    # pool_runs' order: by time, then the side's run order, then result id; its newest row is the last
    idx = idx.assign(_paired=paired).sort_values(["started_at", "_pos", "result_id"], kind="stable")
    series = ["benchmark_id", "metric", "protocol"]
    g = idx.groupby(series, sort=False)
    n, bad = g["result_id"].transform("size"), g["_bad"].transform("any")
    pooled = (n > 1) & ~bad & idx["_rate"] & idx["_paired"]
    newest = ~idx.duplicated(series, keep="last")
    newest_bad = idx["_bad"] & ~idx[idx["_bad"]].duplicated(series, keep="last").reindex(idx.index, fill_value=True)
    return ([int(i) for i in idx.loc[(newest & ~bad) | newest_bad, "result_id"]],
            [int(i) for i in idx.loc[pooled & ~newest, "result_id"]])


def compare(baseline: pd.DataFrame, candidate: pd.DataFrame, th: Optional[Thresholds] = None,
            envs: Optional[dict] = None) -> pd.DataFrame:
    """One row per series of the candidate run (POINT_COLUMNS frames in): COLUMNS, worst first. A series
    whose baseline exists only under another timing protocol is a missing baseline that says so. envs:
    {run id: env} (queries.run_envs), so that two rows from two machines are judged as the gate does."""
    if candidate.empty:
        return pd.DataFrame(columns=COLUMNS)
    base = prepare([result_row(r) for r in pooled_records(baseline)]) if not baseline.empty else []
    cand = prepare([result_row(r) for r in pooled_records(candidate)])
    paired, bmap = pair(base, cand, _key, _key, lambda k: k[:4])
    protocols_of: dict = {}
    for k in bmap:
        protocols_of.setdefault(k[:4], []).append(k[4])
    out, between = [], {}

    def hosts(b: Optional[dict], c: dict) -> str:  # once per pair of runs, not per series
        if not envs or b is None:
            return ""
        runs = (b.get("run_id"), c.get("run_id"))
        if runs not in between:
            between[runs] = other_host(envs.get(runs[0]) or {}, envs.get(runs[1]) or {})
        return between[runs]

    for k, b, c in paired:
        if b is None and "" in protocols_of.get(k[:4], ()):  # a failed baseline row carries no protocol
            b = bmap[k[:4] + ("",)]
        v = judge(b, c, th or Thresholds(), other_host=hosts(b, c))
        if b is None and v.status == R.MISSING and protocols_of.get(k[:4]):
            v.reason = (f"the baseline measured this under protocol {', '.join(protocols_of[k[:4]])}, the candidate "
                        f"under {k[4] or '(none)'}: two protocols are never one series, so it is not compared")
        out.append(dict(zip(KEY, k)) | {
            "unit": c["unit"], "direction": c["direction"], "status": v.status, "label": v.label, "gated": v.gated,
            "new_failure": v.new_failure, "baseline": v.baseline_value, "candidate": v.candidate_value,
            "rel_change": v.change, "p_value": v.p_value, "n_baseline": v.n_baseline, "n_candidate": v.n_candidate,
            "k_baseline": v.k_baseline, "k_candidate": v.k_candidate, "benchmark_id": c["benchmark_id"],
            "reason": v.reason, **{w: c.get(w) for w in WHEN}, **{"baseline_" + w: (b or {}).get(w) for w in WHEN}})
    df = pd.DataFrame(out, columns=COLUMNS)
    df[["baseline", "candidate", "rel_change", "p_value"]] = df[["baseline", "candidate", "rel_change",
                                                                  "p_value"]].astype(float)
    return sort_worst_first(df)


def protocol_mismatches(compared: pd.DataFrame) -> dict[tuple[str, str], int]:
    """{(baseline protocol(s), candidate protocol): series} of the missing baselines a protocol change made."""
    out: dict = {}
    for reason, proto in zip(compared["reason"], compared["protocol"]):
        if isinstance(reason, str) and reason.startswith("the baseline measured this under protocol "):
            base = reason.removeprefix("the baseline measured this under protocol ").split(", the candidate")[0]
            out[(base, proto)] = out.get((base, proto), 0) + 1
    return out


def fmt_value(v, metric: str, unit: str = "") -> str:
    """A figure as its kind reads: errors and rates to 3-4 significant digits (4e-16, not 0.0000000000000004),
    fractions to 3 decimals, counts whole; '' for none."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return ""
    kind = metric_kind(metric, unit or "")
    v = float(v)
    if kind == R.ERROR:
        return f"{v:.3g}"
    if kind == R.FRACTION:
        return f"{v:.3f}"
    if kind == R.COUNT:
        return f"{v:.0f}"
    return f"{v:.4g}"


def sort_worst_first(df: pd.DataFrame) -> pd.DataFrame:
    """New failures, then gated regressions (largest change first), then failures the baseline had too, ..."""
    rank = df["status"].map({s: i for i, s in enumerate(ORDER)}).fillna(len(ORDER)).astype(float)
    known = df["status"].isin(FAILING) & ~df["new_failure"].fillna(False).astype(bool)
    rank[known] = ORDER.index("regressed") + 0.5
    rank[(df["status"] == "regressed") & ~df["gated"].fillna(True).astype(bool)] = ORDER.index("stable") - 0.5
    return (df.assign(_r=rank, _b=-df["rel_change"].abs().fillna(0)).sort_values(["_r", "_b"], kind="stable")
            .drop(columns=["_r", "_b"]).reset_index(drop=True))


def counts(compared: pd.DataFrame) -> dict[str, int]:
    """Series per label, in LABELS order (zeros included)."""
    vc = compared["label"].value_counts() if not compared.empty else {}
    return {s: int(vc.get(s, 0)) for s in LABELS}
