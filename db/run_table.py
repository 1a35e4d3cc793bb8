"""Runs as a table: each run with its wall time and its results counted by status (the Runs page)."""
from __future__ import annotations

from typing import Optional

import pandas as pd
from sqlalchemy import func, select

from db import queries
from db.models import Benchmark, Result, Run
from db.verdict import expected_failure
from suite.record import STATUSES

# failed_correctness counts only the unexpected failures: a known-wrong implementation's failure
# (expected_failure) and a probe point's (its error is the measurement) are counted apart
EXPECTED, PROBE = "expected_failure", "probe_point"
COUNT_COLUMNS = ["n_results", *STATUSES, EXPECTED, PROBE]


def selection(config) -> str:
    """'whole tier', or what a run's config narrowed it to ('-t exp_approx -i 10 implementations'), or
    'outside the runner' (a study driver's or an imported file, whose config names no selection)."""
    config = config if isinstance(config, dict) else {}
    if "techniques" not in config:
        return "outside the runner"
    parts = []
    for flag, key, noun in (("-t", "techniques", "techniques"), ("-i", "impls", "implementations"),
                            ("-c", "cases", "cases")):
        names = [str(n) for n in config.get(key) or []]
        if names:
            parts.append(f"{flag} {' '.join(names) if len(names) <= 2 else f'{len(names)} {noun}'}")
    return " ".join(parts) or "whole tier"


def run_table(url: Optional[str] = None) -> pd.DataFrame:
    """Every run, newest first: queries.RUN_COLUMNS + finished_at, minutes (wall time; NaN for a run
    without an end), selection ("whole tier", or the techniques, implementations and cases the run was
    narrowed to), n_results and one count column per result status."""
    runs = queries.runs(url)
    cols = [*runs.columns, "finished_at", "minutes", "selection", *COUNT_COLUMNS]
    if runs.empty:
        return pd.DataFrame(columns=cols)
    ends = queries._frame(url, select(Run.id, Run.finished_at, Run.config), ["run_id", "finished_at", "config"])
    ends["selection"] = [selection(c) for c in ends.pop("config")]
    per_status = select(Result.run_id, Result.status, func.count()).group_by(Result.run_id, Result.status)
    counts = queries._frame(url, per_status, ["run_id", "status", "n"])
    by_status = (counts.pivot_table(index="run_id", columns="status", values="n", aggfunc="sum", fill_value=0)
                 .reindex(columns=list(STATUSES), fill_value=0))
    by_status["n_results"] = by_status.sum(axis=1)
    why = _expected_failures(url)
    for col in (EXPECTED, PROBE):
        by_status[col] = why.get(col, pd.Series(dtype=int)).reindex(by_status.index, fill_value=0)
    by_status["failed_correctness"] -= by_status[EXPECTED] + by_status[PROBE]
    out = runs.merge(ends, on="run_id", how="left").merge(by_status, left_on="run_id", right_index=True, how="left")
    out[COUNT_COLUMNS] = out[COUNT_COLUMNS].fillna(0).astype(int)
    start = pd.to_datetime(out["started_at"], utc=True)
    end = pd.to_datetime(out["finished_at"], utc=True)
    out["minutes"] = (end - start).dt.total_seconds() / 60.0
    return out[cols]


def _expected_failures(url: Optional[str]) -> pd.DataFrame:
    """Per run, its failed_correctness rows that are expected: columns expected_failure (a known-wrong
    implementation) and probe_point (db.verdict.expected_failure says which), indexed by run_id."""
    stmt = (select(Result.run_id, Result.stats, Benchmark.technique, Benchmark.impl, Benchmark.case_id)
            .join(Benchmark, Result.benchmark_id == Benchmark.id).where(Result.status == "failed_correctness"))
    rows = queries._frame(url, stmt, ["run_id", "stats", "technique", "impl", "case"])
    if rows.empty:
        return pd.DataFrame(columns=[EXPECTED, PROBE])
    kinds = []
    for r in rows.to_dict("records"):
        r["stats"] = queries._json(r["stats"]) or {}
        why = expected_failure(r)
        kinds.append("" if not why else PROBE if why.startswith("probe point") else EXPECTED)
    rows["kind"] = kinds
    rows = rows[rows["kind"] != ""]
    return rows.pivot_table(index="run_id", columns="kind", values="case", aggfunc="count", fill_value=0)
