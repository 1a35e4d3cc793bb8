"""Cached access to db.queries for the pages: the URL comes from $KWATCH_DB (set by `kwatch dashboard`)."""
from __future__ import annotations

import gc
from contextlib import contextmanager
from typing import Iterator, Optional

import pandas as pd
import streamlit as st
from sqlalchemy.orm import Session

from dashboard import url_state, verdict
from db import queries
from db.engine import resolve_url
from db.run_table import run_table as db_run_table
from db.spread_cache import cache_path, cached_builder
from db.spread_history import learned, stamp
from db.verdict import Thresholds
from db.urls import mask_url
from suite.ceilings import share_text

TTL = 60  # seconds a query result is reused; new runs appear within a minute


@contextmanager
def gc_paused() -> Iterator[None]:
    """Python's cyclic garbage collector paused while a page reads and judges thousands of results: the
    decoded JSON (10^4-10^5 lists and dicts, all alive until the verdict is done, none in a cycle) made it
    traverse them again and again, a quarter of Health's time."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def db_url() -> str:
    return resolve_url(None)


@st.cache_data(ttl=TTL, show_spinner=False)
def runs(url: str) -> pd.DataFrame:
    return queries.runs(url)


@st.cache_data(ttl=TTL, show_spinner=False)
def run_table(url: str) -> pd.DataFrame:
    return db_run_table(url)


@st.cache_data(ttl=TTL, show_spinner=False)
def catalog(url: str) -> pd.DataFrame:
    return queries.catalog(url)


@st.cache_data(ttl=TTL, show_spinner=False)
def series_points(url: str, benchmark_ids: tuple[int, ...], metric: str, hardware_keys: tuple[str, ...] = (),
                  software_keys: tuple[str, ...] = (), tier: Optional[str] = None) -> pd.DataFrame:
    return queries.series_points(url, benchmark_ids, metric, hardware_keys, software_keys, tier)


@st.cache_data(ttl=TTL, show_spinner=False)
def technique_runs(url: str, technique: str, metrics: tuple[str, ...], param: Optional[str] = None) -> pd.DataFrame:
    return queries.technique_runs(url, technique, metrics, param)


@st.cache_data(ttl=TTL, show_spinner=False)
def technique_results(url: str, technique: str, metrics: tuple[str, ...],
                      run_ids: tuple[str, ...] = (), param: Optional[str] = None) -> pd.DataFrame:
    return queries.technique_results(url, technique, metrics, run_ids, param)


@st.cache_data(ttl=TTL, show_spinner=False)
def change_points(url: str, technique: str, impl: str, case_id: str, metric: str) -> pd.DataFrame:
    return queries.change_points(url, technique, impl, case_id, metric)


@st.cache_data(ttl=TTL, show_spinner=False)
def acknowledgements(url: str, technique: str, impl: str, case_id: str, metric: str) -> pd.DataFrame:
    return queries.acknowledgements(url, technique, impl, case_id, metric)


def run_label(r) -> str:
    """'2026-11-29 19:26 · nightly · NVIDIA H200 · abc1234' for a runs() row."""
    commit = r["git_commit"][:7] if isinstance(r["git_commit"], str) and r["git_commit"] else "no commit"
    when = pd.Timestamp(r["started_at"]).strftime("%Y-%m-%d %H:%M")
    return f"{when} · {r['tier']} · {r['hardware']} · {commit} · {r['run_id'][:12]}"


def empty_note(what: str) -> None:
    """The standard message of a page with nothing to show yet."""
    st.info(f"No {what} in {mask_url(db_url())} yet. Run `kwatch run` or `kwatch ingest results/...` to add some.")


def with_params(points: pd.DataFrame) -> pd.DataFrame:
    """points with each key of its `params` dicts as a column (`p_<key>`), missing keys as NaN."""
    if points.empty:
        return points
    params = pd.DataFrame([p or {} for p in points["params"]], index=points.index).add_prefix("p_")
    return pd.concat([points, params], axis=1)


def pick_run(runs: pd.DataFrame, key: str, label: str = "run", largest_first: bool = False,
             param: Optional[str] = None):
    """A selectbox over runs (newest first); returns the chosen run_id or None when there are none.
    `largest_first`: preselect the run with the most results (n_results) rather than the newest;
    `param`: the run id also read from and written to the URL's `?param=` (dashboard.url_state)."""
    if runs.empty:
        return None
    labels = {r["run_id"]: run_label(r) for r in runs.to_dict("records")}
    index = int(runs["n_results"].to_numpy().argmax()) if largest_first and "n_results" in runs else 0
    if param:
        return url_state.selectbox(label, list(labels), param, default=list(labels)[index], key=key,
                                   format_func=labels.get)
    return st.selectbox(label, list(labels), index=index, format_func=labels.get, key=key)


@st.cache_data(ttl=TTL, show_spinner=False)
def claims(url: str) -> pd.DataFrame:
    """The claims ledger (db.claims.ledger): one row per claim with its status."""
    from db.claims import ledger

    return pd.DataFrame(ledger(url))


def side_results(url: str, index: pd.DataFrame, run_ids: list[str], other: pd.DataFrame) -> pd.DataFrame:
    """The rows of one side's runs (`index`: their result_index rows; `other`: the other side's) that its
    verdict reads (verdict.pooled_ids), in the side's run order then result id: POINT_COLUMNS. A row whose
    samples alone are pooled is read as its samples, the rest taken from its series' newest row."""
    whole, samples_only = verdict.pooled_ids(index, run_ids, other)
    full = queries.results_by_id(url, whole)
    if samples_only:
        full = pd.concat([full, _pooled_rows(url, index, samples_only, full)], ignore_index=True)
    pos = full["run_id"].map({r: i for i, r in enumerate(run_ids)})
    return full.assign(_pos=pos).sort_values(["_pos", "result_id"]).drop(columns="_pos").reset_index(drop=True)


def _pooled_rows(url: str, index: pd.DataFrame, ids: list[int], full: pd.DataFrame) -> pd.DataFrame:
    """POINT_COLUMNS rows of result ids whose samples are pooled: their own id, run, time, status and
    samples (queries.samples_by_id), every other column their series' row in `full` (its newest)."""
    series = ["benchmark_id", "metric", "_p"]
    own = ["result_id", "run_id", "started_at", "status"]
    rows = index[index["result_id"].isin(ids)]
    rows = rows.assign(_p=rows["protocol"].fillna(""))[own + series]
    newest = full.assign(_p=full["protocol"].fillna("")).drop(columns=own + ["samples"])
    rows = rows.merge(newest.drop_duplicates(series, keep="last"), on=series, how="inner", validate="many_to_one")
    samples = queries.samples_by_id(url, ids)
    return rows.assign(samples=rows["result_id"].map(samples))[list(full.columns)]


def thresholds(url: str, candidate_runs: tuple[str, ...] = ()) -> Thresholds:
    """The verdict's thresholds with the run-to-run spreads learned from this database, the candidate
    runs left out (as the gate and the nightly job judge): only runs not seen before are read (db.spread_cache;
    0.9 s of CPU for all 297 committed runs on the 2-core machine, 0.15 s with every run kept in the file,
    and dashboard.serve brings the file up to date before serving)."""
    return _thresholds(url, stamp(url), tuple(sorted(candidate_runs)))


@st.cache_resource(ttl=24 * 3600, max_entries=4, show_spinner="Learning each series' run-to-run spread…")
def _builder(url: str, runs_stamp: tuple):  # runs_stamp: part of the cache key
    if not runs_stamp:
        return None
    with Session(queries.read_engine(url)) as s:
        return cached_builder(s, cache_path(url))[0]  # only runs the cache file lacks are read


# a resource, not data: the same (frozen) Thresholds is handed out, not unpickled again on every page run
@st.cache_resource(ttl=24 * 3600, max_entries=64, show_spinner=False)
def _thresholds(url: str, runs_stamp: tuple, candidate_runs: tuple[str, ...]) -> Thresholds:
    return Thresholds(spreads=learned(_builder(url, runs_stamp), candidate_runs))


@st.cache_data(ttl=TTL, show_spinner=False)
def compared(url: str, base_runs: tuple[str, ...], cand_runs: tuple[str, ...]) -> pd.DataFrame:
    """verdict.compare of the baseline runs' results against the candidate runs' (several runs of a side
    pooled per series), with each series' `share_of_ceiling`; read and judged once per pair of run sets."""
    with gc_paused():
        index = queries.result_index(url, set(base_runs) | set(cand_runs))
        b_index, c_index = index[index["run_id"].isin(base_runs)], index[index["run_id"].isin(cand_runs)]
        base = side_results(url, b_index, list(base_runs), c_index)
        cand = side_results(url, c_index, list(cand_runs), b_index)
        cmp = verdict.compare(base, cand, thresholds(url, cand_runs), queries.run_envs(url, base_runs + cand_runs))
    def keys(df):  # columns as lists: iterating a pandas (Arrow) string column boxes each cell
        return zip(*(df[c].tolist() for c in ("technique", "impl", "case_id", "metric")))

    shares = {k: share_text({"ceiling": c if isinstance(c, dict) else None})
              for k, c in zip(keys(cand), cand["ceiling"].tolist())}
    return cmp.assign(share_of_ceiling=[shares.get(k, "-") for k in keys(cmp)])
