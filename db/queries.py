"""Read-only queries for the dashboard: each takes a database URL and returns a pandas DataFrame.

Connections are read-only (an existing SQLite file is opened `?mode=ro` with `PRAGMA query_only`,
PostgreSQL sessions have `default_transaction_read_only`; a team gives the dashboard a reader role, see
`kwatch db roles`).
A database without the schema (or without the CI tables) reads as empty, never as an error.
Every query goes through an index: results by (benchmark_id, metric, run_id) or (run_id, status).
"""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Iterable, Optional

import pandas as pd
from sqlalchemy import Engine, Text, and_, case, cast, create_engine, event, func, inspect, null, select

from db.engine import resolve_url
from db.json_text import loads
from db.models import Benchmark, Environment, Result, Run
from db.samples import pack, unpack

RUN_COLUMNS = ["run_id", "started_at", "tier", "reason", "source", "git_commit", "git_branch", "git_dirty",
               "environment_id", "hardware_key", "software_key", "device", "gpu_name", "cpu", "torch",
               "triton", "cuda", "driver", "hardware", "software"]
CATALOG_COLUMNS = ["benchmark_id", "technique", "impl", "case_id", "metric", "unit", "direction"]
POINT_COLUMNS = ["result_id", "benchmark_id", "technique", "impl", "case_id", "metric", "unit", "direction",
                 "value", "status", "error", "protocol", "impl_version", "impl_hash", "params", "samples", "tolerance", "ceiling", "stats", "run_id",
                 "started_at", "git_commit", "tier", "hardware_key", "software_key", "hardware", "software"]


def _readonly_sqlite(dbapi_conn, _record) -> None:
    cur = dbapi_conn.cursor()
    cur.execute("PRAGMA query_only=ON")
    cur.close()


@lru_cache(maxsize=16)
def read_engine(url: Optional[str] = None) -> Engine:
    """A read-only engine for the resolved URL (one per URL per process)."""
    url = resolve_url(url)
    if url.startswith("postgresql://"):
        url = "postgresql+psycopg://" + url[len("postgresql://"):]
    if url.startswith("postgresql"):
        return create_engine(url, pool_pre_ping=True, json_deserializer=loads,
                             connect_args={"options": "-c default_transaction_read_only=on"})
    path = url.removeprefix("sqlite:///") if url.startswith("sqlite:///") else None
    if path and path != ":memory:" and not path.startswith("file:") and Path(path).is_file():
        url = f"sqlite:///file:{Path(path).resolve()}?mode=ro&uri=true"  # the OS-level open is read-only
    engine = create_engine(url, json_deserializer=loads)
    if engine.dialect.name == "sqlite":
        event.listen(engine, "connect", _readonly_sqlite)
    return engine


def tables(url: Optional[str] = None) -> set[str]:
    """Names of the tables present (an empty or missing database has none)."""
    return set(inspect(read_engine(url)).get_table_names())


def _frame(url: Optional[str], stmt, columns: list[str]) -> pd.DataFrame:
    with read_engine(url).connect() as conn:
        rows = conn.execute(stmt).all()
    return pd.DataFrame([tuple(r) for r in rows], columns=columns)


def _text(v: Any) -> Optional[str]:
    """v when it is a non-empty string (pandas turns SQL NULL into None or NaN)."""
    return v if isinstance(v, str) and v else None


def hardware_label(gpu_name: Any, cpu: Any) -> str:
    return _text(gpu_name) or f"CPU {_text(cpu) or '?'}"


def software_label(row: Any) -> str:
    parts = [(name, _text(getattr(row, attr))) for name, attr in
             (("torch", "torch"), ("triton", "triton"), ("CUDA", "cuda"), ("driver", "driver"))]
    return " · ".join(f"{n} {v}" for n, v in parts if v) or "unknown software"


def _label(df: pd.DataFrame) -> pd.DataFrame:
    """Add `hardware` and `software` labels (computed once per distinct environment)."""
    if df.empty:
        df["hardware"], df["software"] = pd.Series(dtype=str), pd.Series(dtype=str)
        return df
    env_cols = ["gpu_name", "cpu", "torch", "triton", "cuda", "driver"]
    # missing values (None, NaN) made one key, so that a dict finds each environment's labels
    keys = list(zip(*([v if isinstance(v, str) else None for v in df[c].tolist()] for c in env_cols)))
    labels = {k: (hardware_label(k[0], k[1]), software_label(SimpleNamespace(**dict(zip(env_cols, k)))))
              for k in set(keys)}
    df["hardware"] = [labels[k][0] for k in keys]
    df["software"] = [labels[k][1] for k in keys]
    return df


def runs(url: Optional[str] = None) -> pd.DataFrame:
    """Every run with its environment, newest first: RUN_COLUMNS."""
    if "runs" not in tables(url):
        return pd.DataFrame(columns=RUN_COLUMNS)
    stmt = (select(Run.id, Run.started_at, Run.tier, Run.reason, Run.source, Run.git_commit, Run.git_branch,
                   Run.git_dirty, Run.environment_id, Environment.hardware_key, Environment.software_key,
                   Environment.device, Environment.gpu_name, Environment.cpu, Environment.torch,
                   Environment.triton, Environment.cuda, Environment.driver)
            .join(Environment, Environment.id == Run.environment_id).order_by(Run.started_at.desc(), Run.id))
    return _label(_frame(url, stmt, RUN_COLUMNS[:-2]))


def run_envs(url: Optional[str], run_ids: Iterable[str]) -> dict[str, dict]:
    """{run id: the env it recorded} (runners.env.fingerprint's fields, as ingested)."""
    ids = sorted(set(run_ids))
    if not ids or "runs" not in tables(url):
        return {}
    stmt = (select(Run.id, Environment.raw).join(Environment, Environment.id == Run.environment_id)
            .where(Run.id.in_(ids)))
    with read_engine(url).connect() as c:
        return {i: _json(raw) or {} for i, raw in c.execute(stmt)}


def catalog(url: Optional[str] = None) -> pd.DataFrame:
    """Every (benchmark, metric) pair that has results: CATALOG_COLUMNS (unit/direction of one result)."""
    if "results" not in tables(url):
        return pd.DataFrame(columns=CATALOG_COLUMNS)
    # DISTINCT over the covering index ix_results_series, then unit/direction of one row per pair.
    pairs = select(Result.benchmark_id, Result.metric).distinct().subquery()
    one = (select(Result.unit, Result.direction)
           .where(Result.benchmark_id == pairs.c.benchmark_id, Result.metric == pairs.c.metric).limit(1))
    stmt = (select(Benchmark.id, Benchmark.technique, Benchmark.impl, Benchmark.case_id, pairs.c.metric,
                   one.with_only_columns(Result.unit).scalar_subquery(),
                   one.with_only_columns(Result.direction).scalar_subquery())
            .join(pairs, pairs.c.benchmark_id == Benchmark.id)
            .order_by(Benchmark.technique, Benchmark.impl, Benchmark.case_id, pairs.c.metric))
    return _frame(url, stmt, CATALOG_COLUMNS)


# A series point's time: when it ran, except a backfilled run, which stands at its commit's date.
WHEN = case((Run.reason == "backfill", func.coalesce(Run.git_date, Run.started_at)), else_=Run.started_at)


def _points_stmt(with_params: bool = False, with_stats: bool = False, raw_json: bool = False):
    """Results with their benchmark, run and environment; `params` and `stats` only when asked (JSON
    decoding is most of a large page's time; the tolerance is always there). `raw_json`: params and stats
    as undecoded text (cast in SQL: PostgreSQL's driver would decode jsonb itself, with json), no `ceiling`, the samples as their float64 bytes (samples_f64) and, last, the JSON
    text of a row stored without them (see _full_points)."""
    def col(c, wanted=True):
        return cast(c, Text).label(c.key) if raw_json and wanted else c if wanted else null().label(c.key)

    ceiling = null().label("ceiling") if raw_json else Result.stats["ceiling"]
    samples = Result.samples_f64.label("samples") if raw_json else Result.samples
    fallback = [_samples_json_fallback()] if raw_json else []
    return (select(Result.id, Result.benchmark_id, Benchmark.technique, Benchmark.impl, Benchmark.case_id,
                   Result.metric, Result.unit, Result.direction, Result.value, Result.status, Result.error,
                   Result.protocol, Result.impl_version, Result.impl_hash, col(Result.params, with_params),
                   samples, Result.stats["tolerance"].as_float(), ceiling,
                   col(Result.stats, with_stats), Run.id, WHEN.label("started_at"),
                   Run.git_commit, Run.tier, Environment.hardware_key, Environment.software_key,
                   Environment.gpu_name, Environment.cpu, Environment.torch, Environment.triton,
                   Environment.cuda, Environment.driver, *fallback)
            .join(Benchmark, Benchmark.id == Result.benchmark_id)
            .join(Run, Run.id == Result.run_id)
            .join(Environment, Environment.id == Run.environment_id))


def _points(url: Optional[str], stmt) -> pd.DataFrame:
    cols = POINT_COLUMNS[:-2] + ["gpu_name", "cpu", "torch", "triton", "cuda", "driver"]
    df = _label(_frame(url, stmt, cols))
    return df.drop(columns=["gpu_name", "cpu", "torch", "triton", "cuda", "driver"])


def series_points(url: Optional[str], benchmark_ids: Iterable[int], metric: str,
                  hardware_keys: Iterable[str] = (), software_keys: Iterable[str] = (),
                  tier: Optional[str] = None) -> pd.DataFrame:
    """Results of `metric` for the benchmarks (all runs, oldest first), optionally filtered by
    hardware/software key and tier: POINT_COLUMNS."""
    ids = [int(i) for i in benchmark_ids]
    if "results" not in tables(url) or not ids:
        return pd.DataFrame(columns=POINT_COLUMNS)
    stmt = _points_stmt().where(Result.benchmark_id.in_(ids), Result.metric == metric)
    if hardware_keys:
        stmt = stmt.where(Environment.hardware_key.in_(list(hardware_keys)))
    if software_keys:
        stmt = stmt.where(Environment.software_key.in_(list(software_keys)))
    if tier:
        stmt = stmt.where(Run.tier == tier)
    return _points(url, stmt.order_by(WHEN, Result.id))


def run_results(url: Optional[str], run_id: str) -> pd.DataFrame:
    """Every result of one run, with params and stats (what a verdict reads): POINT_COLUMNS."""
    if "results" not in tables(url):
        return pd.DataFrame(columns=POINT_COLUMNS)
    return _points(url, _points_stmt(True, True).where(Result.run_id == run_id).order_by(Result.id))


def _benchmark_ids(technique: str, param: Optional[str]):
    """Benchmarks of a technique (with `param` in their params: probe rows carry their own case ids
    and params, so the filter runs on the small benchmarks table, not on the results)."""
    stmt = select(Benchmark.id).where(Benchmark.technique == technique)
    if param:
        stmt = stmt.where(Benchmark.params[param].as_string().is_not(None))
    return stmt


def result_index(url: Optional[str], run_ids: Iterable[str],
                 benchmark_ids: Optional[list[int]] = None) -> pd.DataFrame:
    """Light rows (no JSON) of every result of some runs (only of `benchmark_ids` where given): result_id,
    benchmark_id, metric, unit, protocol, status, run_id, started_at (the run's point in time, as in series_points)."""
    cols = ["result_id", "benchmark_id", "metric", "unit", "protocol", "status", "run_id", "started_at"]
    run_ids = list(run_ids)
    if "results" not in tables(url) or not run_ids or benchmark_ids == []:
        return pd.DataFrame(columns=cols)
    stmt = (select(Result.id, Result.benchmark_id, Result.metric, Result.unit, Result.protocol, Result.status,
                   Result.run_id).where(Result.run_id.in_(run_ids)))
    if benchmark_ids is None:
        df = _frame(url, stmt, cols[:-1])
    else:  # chunked: an IN list has a bound on its parameters (SQLite 32,766)
        found = [_frame(url, stmt.where(Result.benchmark_id.in_(benchmark_ids[i:i + 5000])), cols[:-1])
                 for i in range(0, len(benchmark_ids), 5000)]
        df = pd.concat([f for f in found if not f.empty] or found[:1], ignore_index=True)
    # one date per run, not per result: the dates of a few runs are decoded, not thousands
    when = _frame(url, select(Run.id, WHEN).where(Run.id.in_(run_ids)), ["run_id", "started_at"])
    return df.merge(when, on="run_id", how="left")[cols]


def _json(v: Any) -> Any:
    """A JSON column read as text, decoded (a driver that decodes JSON itself hands over the object).
    orjson decodes the stored samples several times faster than json, which was most of a Health or
    Compare page's time; json reads what orjson refuses (NaN literals)."""
    return loads(v) if isinstance(v, str) else v


def _samples_json_fallback():
    """The JSON text of a row's samples where it has no float64 bytes (stored before migration 0006), else NULL."""
    return case((Result.samples_f64.is_(None), cast(Result.samples, Text)))


def _samples_array(blob, js) -> Any:
    """A row's samples as a float64 array: its bytes, or its JSON text where it has none (null as NaN)."""
    return unpack(blob) if js is None else unpack(pack(_json(js)))


def _full_points(url: Optional[str], stmt) -> pd.DataFrame:
    """_points of a _points_stmt(True, True, raw_json=True): params and stats decoded here, column by
    column, `ceiling` taken from the decoded stats (the row-by-row JSON processing of the driver layer
    was most of a Health page's time), and the samples as float64 arrays (db.samples: null as NaN)."""
    cols = POINT_COLUMNS[:-2] + ["gpu_name", "cpu", "torch", "triton", "cuda", "driver", "samples_json"]
    with read_engine(url).connect() as conn:
        rows = conn.execute(stmt).all()
    data = {c: list(v) for c, v in zip(cols, zip(*rows))} if rows else {c: [] for c in cols}
    for c in ("params", "stats"):
        data[c] = [_json(v) for v in data[c]]
    data["samples"] = [_samples_array(b, j)
                       for b, j in zip(data["samples"], data.pop("samples_json"))]
    data["ceiling"] = [s.get("ceiling") if isinstance(s, dict) else None for s in data["stats"]]
    df = _label(pd.DataFrame(data, columns=cols[:-1]))
    return df.drop(columns=["gpu_name", "cpu", "torch", "triton", "cuda", "driver"])


def results_by_id(url: Optional[str], ids: Iterable[int], chunk: int = 5000) -> pd.DataFrame:
    """Full result rows (POINT_COLUMNS, with params and stats: what a verdict reads; samples as float64
    arrays) of the given result ids."""
    ids = [int(i) for i in ids]
    if "results" not in tables(url) or not ids:
        return pd.DataFrame(columns=POINT_COLUMNS)
    parts = [_full_points(url, _points_stmt(True, True, raw_json=True).where(Result.id.in_(ids[i:i + chunk])))
             for i in range(0, len(ids), chunk)]
    found = [p for p in parts if not p.empty] or parts[:1]  # an empty chunk would turn the dtypes to object
    return pd.concat(found, ignore_index=True)


def samples_by_id(url: Optional[str], ids: Iterable[int], chunk: int = 5000) -> pd.Series:
    """The samples of the given result ids as float64 arrays (as results_by_id reads them), by result id."""
    ids = [int(i) for i in ids]
    out: dict = {}
    if "results" not in tables(url) or not ids:
        return pd.Series(out, dtype=object)
    fallback = _samples_json_fallback()
    with read_engine(url).connect() as conn:
        for i in range(0, len(ids), chunk):
            stmt = select(Result.id, Result.samples_f64, fallback).where(Result.id.in_(ids[i:i + chunk]))
            for rid, blob, js in conn.execute(stmt):
                out[rid] = _samples_array(blob, js)
    return pd.Series(out, dtype=object)


def technique_results(url: Optional[str], technique: str, metrics: Iterable[str],
                      run_ids: Iterable[str] = (), param: Optional[str] = None) -> pd.DataFrame:
    """Results of a technique's metrics (optionally of some runs only, and only of benchmarks whose
    params hold `param`): POINT_COLUMNS."""
    if "results" not in tables(url):
        return pd.DataFrame(columns=POINT_COLUMNS)
    ids = list(_frame(url, _benchmark_ids(technique, param), ["id"])["id"])
    if not ids:
        return pd.DataFrame(columns=POINT_COLUMNS)
    stmt = _points_stmt(with_params=True).where(Result.benchmark_id.in_(ids), Result.metric.in_(list(metrics)))
    run_ids = list(run_ids)
    if run_ids:
        stmt = stmt.where(Result.run_id.in_(run_ids))
    return _points(url, stmt.order_by(WHEN, Result.id))


def technique_runs(url: Optional[str], technique: str, metrics: Iterable[str],
                   param: Optional[str] = None) -> pd.DataFrame:
    """Runs holding results of the technique's metrics (of benchmarks with `param` if given),
    newest first: RUN_COLUMNS + n_results."""
    cols = RUN_COLUMNS + ["n_results"]
    if "results" not in tables(url):
        return pd.DataFrame(columns=cols)
    counts = (select(Result.run_id, func.count().label("n"))
              .where(Result.benchmark_id.in_(_benchmark_ids(technique, param)), Result.metric.in_(list(metrics)))
              .group_by(Result.run_id))
    found = _frame(url, counts, ["run_id", "n_results"])
    return runs(url).merge(found, on="run_id")[cols]


def _ci_table(url: Optional[str], name: str):
    if name not in tables(url):
        return None
    from db import models_ci  # noqa: F401  (the gate's tables; present once its migration ran)

    return Run.metadata.tables.get(name)


def change_points(url: Optional[str], technique: str, impl: str, case_id: str, metric: str) -> pd.DataFrame:
    """Detected change points of a series (every hardware/software/protocol), oldest first."""
    cols = ["id", "hardware_key", "software_key", "protocol", "run_id", "run_started_at", "method",
            "before_value", "after_value", "rel_change", "kind"]
    t = _ci_table(url, "ci_change_points")
    if t is None:
        return pd.DataFrame(columns=cols)
    stmt = (select(*[t.c[c] for c in cols])
            .where(and_(t.c.technique == technique, t.c.impl == impl, t.c.case_id == case_id,
                        t.c.metric == metric)).order_by(t.c.run_started_at))
    return _frame(url, stmt, cols)


def acknowledgements(url: Optional[str], technique: str, impl: str, case_id: str, metric: str) -> pd.DataFrame:
    """Acknowledgements (intended changes that re-baseline) of a series, oldest first."""
    cols = ["hardware_key", "software_key", "protocol", "from_run_id", "from_started_at", "who", "why"]
    t = _ci_table(url, "ci_acknowledgements")
    if t is None:
        return pd.DataFrame(columns=cols)
    stmt = (select(*[t.c[c] for c in cols])
            .where(and_(t.c.technique == technique, t.c.impl == impl, t.c.case_id == case_id,
                        t.c.metric == metric)).order_by(t.c.from_started_at))
    return _frame(url, stmt, cols)
