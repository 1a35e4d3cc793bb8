"""Health: per hardware, every series of the latest nightly against that series' previous result.

A nightly may be written as several run files (one per technique), so the "latest nightly" of a
hardware is every run of the tier within WINDOW of its newest run; a series' candidate is its newest
result there, its baseline the result before it, looked for back to LOOKBACK runs before the window.
"""
from __future__ import annotations

from datetime import timedelta

import pandas as pd

import streamlit as st

from dashboard import data, verdict
from db import queries
from db.verdict import Thresholds, metric_kind
from db.verdict.rules import THROUGHPUT, TIMING

WINDOW = timedelta(hours=24)
LOOKBACK = 10
SERIES = ["benchmark_id", "metric", "protocol"]


def windows(runs: pd.DataFrame, tier: str) -> list[tuple[str, str, list[str], list[str]]]:
    """[(hardware, hardware_key, run ids of the latest window, run ids of up to LOOKBACK runs before it)]."""
    out = []
    tiered = runs[runs["tier"] == tier].sort_values("started_at", ascending=False, kind="stable")
    for key, g in tiered.groupby("hardware_key", sort=False):
        newest = pd.Timestamp(g["started_at"].iloc[0])
        inside = g[pd.to_datetime(g["started_at"]) > newest - WINDOW]
        before = g[pd.to_datetime(g["started_at"]) <= newest - WINDOW].head(LOOKBACK)
        out.append((g["hardware"].iloc[0], key, list(inside["run_id"]), list(before["run_id"])))
    return sorted(out, key=lambda t: t[0])


def judged_runs(runs: pd.DataFrame, tier: str, series: pd.DataFrame) -> pd.DataFrame:
    """Per hardware: its latest run of the tier (date, commit, run id), the runs of its window, and the
    runs the shown `series` (health()'s rows) were judged against: how many, oldest and newest date."""
    cols = ["hardware", "latest run", "commit", "run", "runs in window", "window from", "baseline runs",
            "baselines from", "baselines to"]
    by_id = runs.set_index("run_id")
    rows = []
    for hardware, key, inside, before in windows(runs, tier):
        newest = by_id.loc[inside[0]]
        commit = newest["git_commit"] if isinstance(newest["git_commit"], str) and newest["git_commit"] else ""
        mine = series[(series["hardware_key"] == key) & series["baseline_run_id"].notna()] if not series.empty \
            else series
        based = pd.to_datetime(mine["baseline_started_at"]) if len(mine) else pd.Series(dtype="datetime64[ns]")
        when = lambda t: str(pd.Timestamp(t))  # noqa: E731  (text: a first run has a sentence here)
        none = verdict.FIRST_RUN[not hardware.startswith("CPU ")] if not before else "no baseline found"
        rows.append([hardware, pd.Timestamp(newest["started_at"]), commit[:7] or "no commit", inside[0][:12],
                     len(inside), pd.Timestamp(by_id.loc[inside[-1], "started_at"]),
                     int(mine["baseline_run_id"].nunique()) if len(mine) else none,
                     when(based.min()) if len(mine) else none, when(based.max()) if len(mine) else none])
    return pd.DataFrame(rows, columns=cols)


def pairs(index: pd.DataFrame, window_runs: list[str], order: list[str]) -> tuple[list[int], list[int]]:
    """(candidate result ids, baseline result ids) from a result_index frame, `order` listing its run
    ids newest first: per series its newest result if that lies in the window, and the one before it."""
    if index.empty:
        return [], []
    age = {r: i for i, r in enumerate(order)}
    idx = index.assign(protocol=index["protocol"].fillna(""), _age=index["run_id"].map(age))
    idx = idx.sort_values(["_age", "result_id"], ascending=[True, False])
    rank = idx.groupby(SERIES, sort=False).cumcount()
    newest = idx[(rank == 0) & idx["run_id"].isin(window_runs)]
    prev = idx[rank == 1]
    prev = prev[prev.set_index(SERIES).index.isin(newest.set_index(SERIES).index)]
    return list(newest["result_id"]), list(prev["result_id"])


def series_index(url: str, inside: list[str], before: list[str]) -> pd.DataFrame:
    """queries.result_index of the window's runs and, of the runs before it (newest first), only what pairs()
    can pick: a run's rows are read for the series still lacking an older result, and reading stops once
    none lacks one (most nights the first run before the window holds every baseline)."""
    index = queries.result_index(url, inside)
    if index.empty or not before:
        return index
    key = lambda df: pd.MultiIndex.from_frame(  # noqa: E731
        df[["benchmark_id", "metric"]].assign(protocol=df["protocol"].fillna("")))
    seen = index.groupby([index["benchmark_id"], index["metric"], index["protocol"].fillna("")]).size()
    lacking = seen[seen < 2].index  # a series seen twice in the window has its baseline there
    parts, i, step = [index], 0, 1
    while len(lacking) and i < len(before):
        chunk = before[i:i + step]
        found = queries.result_index(url, chunk, benchmark_ids=sorted(set(lacking.get_level_values(0))))
        found = found[key(found).isin(lacking)]
        parts.append(found)
        lacking = lacking[~lacking.isin(key(found))]
        i, step = i + step, step * 2
    return pd.concat(parts, ignore_index=True)


def health(url: str, runs: pd.DataFrame, tier: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(counts per hardware x status, every judged series with its hardware), worst first."""
    frames = []
    for hardware, key, inside, before in windows(runs, tier):
        with data.gc_paused():
            index = series_index(url, inside, before)
            cand_ids, base_ids = pairs(index, inside, inside + before)
            # no baseline anywhere (a first run): nothing is judged, so no spreads are learned for it
            th = data.thresholds(url, tuple(inside)) if base_ids else Thresholds()
            cmp = verdict.compare(queries.results_by_id(url, base_ids), queries.results_by_id(url, cand_ids), th,
                                  queries.run_envs(url, inside + before))
        if not before:  # the hardware's first run of the tier: nothing to miss
            first = verdict.FIRST_RUN[not hardware.startswith("CPU ")]
            cmp.loc[cmp["status"] == "missing baseline", ["label", "reason"]] = [first, first]
        frames.append(one_per_kernel(cmp).assign(hardware=hardware, hardware_key=key))
    if not frames:
        return pd.DataFrame(columns=verdict.LABELS), pd.DataFrame(columns=verdict.COLUMNS + ["hardware", "hardware_key"])
    series = pd.concat(frames, ignore_index=True)
    return counts(series), verdict.sort_worst_first(series)


def one_per_kernel(cmp: pd.DataFrame) -> pd.DataFrame:
    """cmp without the throughput rows of kernels that have a timing row (a rate is the same samples as
    the latency, so one kernel is one series, not two)."""
    if cmp.empty:
        return cmp
    kind = [metric_kind(m, u) for m, u in zip(cmp["metric"], cmp["unit"].fillna(""))]
    kernel = list(zip(cmp["technique"], cmp["impl"], cmp["case_id"], cmp["protocol"].fillna("")))
    timed = {k for k, t in zip(kernel, kind) if t == TIMING}
    keep = [not (t == THROUGHPUT and k in timed) for k, t in zip(kernel, kind)]
    return cmp[keep].reset_index(drop=True)


@st.cache_data(ttl=data.TTL, show_spinner=False)
def cached(url: str, tier: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """health() of the database's runs, kept for data.TTL seconds (only its small result is stored: the
    thousands of result rows it reads are not pickled into the cache)."""
    return health(url, data.runs(url), tier)


def counts(series: pd.DataFrame) -> pd.DataFrame:
    """Series per hardware x label (a host-timer change that does not gate is its own column)."""
    return series.groupby(["hardware", "label"]).size().unstack(fill_value=0).reindex(columns=verdict.LABELS, fill_value=0)
