"""Learn each series' run-to-run spread (db.verdict.spread) from result files or the database.

    python -m db.spread_history results/h200 --out db/verdict/run_spread.json

Runs count together only as the same code: same implementation hash, software key and exact timing
protocol; a change of any of them is a level, not noise, so each such group contributes its own
within-group spread and the groups are pooled per series.
"""
from __future__ import annotations

import argparse
import math
import sys
from collections import defaultdict
from pathlib import Path
from typing import Collection, Iterable, Optional

from sqlalchemy import Text, case, cast, func, null, select
from sqlalchemy.orm import Session

from db.engine import resolve_url, sqlite_path
from db.ingest import ResultFileError, load_any
from db.json_text import loads
from db.models import Benchmark, Environment, Result, Run
from db.verdict import counts_of, host_timer, metric_kind, prepare
from db.verdict.counts import grid_axes
from db.verdict.rules import FRACTION, THROUGHPUT, TIMING
from db.queries import read_engine, tables
from db.verdict.spread import Entry, SpreadTable, committed, family, key_of, siblings
from suite.record import HARDWARE_KEYS, SOFTWARE_KEYS
from suite.record import key_of as env_key


def _positive(x) -> Optional[float]:
    return float(x) if isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) and x > 0 else None


class Builder:
    """Collects one value per (series group, run) and reduces them to a SpreadTable."""

    def __init__(self) -> None:
        self.runs: set[str] = set()
        self.timing: dict[tuple, dict[str, float]] = defaultdict(dict)
        self.fraction: dict[tuple, dict[str, tuple[int, int]]] = defaultdict(dict)

    def add_rows(self, run_id: str, hardware_key: str, software_key: str, rows: list[dict]) -> None:
        """One run's result rows (result-file shape; samples not needed)."""
        self.runs.add(run_id)
        for r in prepare([r for r in rows if r.get("status") == "ok"]):
            kind = metric_kind(r["metric"], r.get("unit", ""))
            protocol = (r.get("stats") or {}).get("protocol") or ""
            key = key_of(r, hardware_key)
            if kind in (TIMING, THROUGHPUT) and not host_timer(protocol):
                v = _positive(r.get("value"))
                if v is not None:
                    self.timing[(key, software_key, protocol, r.get("impl_hash"))].setdefault(run_id, math.log(v))
            elif kind == FRACTION:
                kn = counts_of(r)
                if kn and kn[1] > 0:
                    self.fraction[(key, software_key, r.get("impl_hash"))].setdefault(run_id, kn)

    def parts(self) -> dict[str, dict]:
        """Each run's values, {run_id: {"timing": [[*group, log value]], "fraction": [[*group, k, n]]}}
        (JSON-able; from_parts of them is this builder again)."""
        out = {r: {"timing": [], "fraction": []} for r in self.runs}
        for group, runs in self.timing.items():
            for r, v in runs.items():
                out[r]["timing"].append([*group, v])
        for group, runs in self.fraction.items():
            for r, (k, n) in runs.items():
                out[r]["fraction"].append([*group, k, n])
        return out

    @classmethod
    def from_parts(cls, parts: dict[str, dict]) -> "Builder":
        """The builder of every run's parts() (a timing group is (key tuple, software, protocol, impl hash),
        a fraction group (key tuple, software, impl hash))."""
        b = cls()
        b.runs.update(parts)
        for r, part in parts.items():
            for *group, v in part["timing"]:
                b.timing[(tuple(group[0]), *group[1:])][r] = v
            for *group, k, n in part["fraction"]:
                b.fraction[(tuple(group[0]), *group[1:])][r] = (k, n)
        return b

    def add_document(self, doc: dict) -> None:
        run = doc["run"]
        env = run.get("env") or {}
        hw = run.get("hardware_key") or env_key(env, HARDWARE_KEYS)
        sw = run.get("software_key") or env_key(env, SOFTWARE_KEYS)
        self.add_rows(run["id"], hw, sw, doc["results"])

    def table(self, source: str, skip_runs: Iterable[str] = ()) -> SpreadTable:
        """The table of what was added, the runs in skip_runs left out (a held-out check)."""
        t, skip = SpreadTable(source=source), set(skip_runs)
        for (key, *_), runs in self.timing.items():
            x = [v for r, v in runs.items() if r not in skip]
            if len(x) >= 2:
                mean = sum(x) / len(x)
                ss = sum((v - mean) ** 2 for v in x)
                t.timings.setdefault(key, Entry()).add(ss, len(x) - 1)
                t.timings.setdefault(siblings(key), Entry()).add(ss, len(x) - 1)
        for (key, *_), runs in self.fraction.items():
            kn = [v for r, v in runs.items() if r not in skip]
            if len(kn) < 2:
                continue
            p = sum(k for k, _ in kn) / sum(n for _, n in kn)
            chi2 = 0.0 if p in (0.0, 1.0) else sum((k - n * p) ** 2 / (n * p * (1 - p)) for k, n in kn)
            t.fractions.setdefault(key, Entry()).add(chi2, len(kn) - 1)
        return t


def builder_of(paths: Iterable[Path]) -> tuple[Builder, int]:
    """A Builder fed every result file under paths (folders searched for *.json and *.json.gz), and how
    many files it read."""
    b, n = Builder(), 0
    for path in paths:
        files = sorted(path.rglob("*.json*")) if path.is_dir() else [path]
        for f in files:
            if not f.name.endswith((".json", ".json.gz")):
                continue
            try:
                doc = load_any(f)[0]
            except (ResultFileError, ValueError, KeyError):
                continue  # not a result file (a study's own JSON)
            b.add_document(doc)
            n += 1
    return b, n


def from_files(paths: Iterable[Path]) -> SpreadTable:
    """The table learned from result files (folders searched for *.json and *.json.gz)."""
    b, n = builder_of(paths)
    return b.table(f"{n} result files")


def builder_from_session(session: Session, runs: Optional[Collection[str]] = None) -> Builder:
    """A Builder fed every run stored in the database, or only `runs` (values and stats only, no samples).
    Only the metrics a spread is learned for are read (timings, rates, quality fractions: pooling a grid
    is per metric, so leaving the others out changes nothing), and each benchmark's params are decoded once.
    The same as add_rows of each run's rows, without a dict per row: a timing row needs only its protocol
    (extracted in SQL), a fraction row its stats, and only grid cells go through prepare()."""
    pairs = session.execute(select(Result.metric, Result.unit).distinct()).all()
    kinds = {(m, u): metric_kind(m, u or "") for m, u in pairs}
    metrics = sorted({m for (m, _), k in kinds.items() if k in (TIMING, THROUGHPUT, FRACTION)})
    if not metrics:
        return Builder()
    fractions = sorted({m for (m, _), k in kinds.items() if k == FRACTION})
    # the results table is read alone: joining runs, environments and benchmarks row by row cost more
    # than the small maps built here once
    bench = {i: (t, im, c, p) for i, t, im, c, p in session.execute(
        select(Benchmark.id, Benchmark.technique, Benchmark.impl, Benchmark.case_id, Benchmark.params))}
    env = {r: (hw or "", sw) for r, hw, sw in session.execute(
        select(Run.id, Environment.hardware_key, Environment.software_key)
        .join(Environment, Run.environment_id == Environment.id))}
    q = (select(Result.run_id, Result.benchmark_id, Result.metric, Result.unit, Result.value,
                Result.stats["protocol"].as_string(),
                case((Result.metric.in_(fractions), Result.stats), else_=null()) if fractions else null(),
                cast(Result.params, Text), Result.impl_hash)
         .where(Result.status == "ok", Result.metric.in_(metrics)))
    wanted = None if runs is None else sorted(runs)
    chunks = [q] if wanted is None else [q.where(Result.run_id.in_(wanted[i:i + 500]))
                                         for i in range(0, len(wanted), 500)]
    b = Builder()
    cells: dict[str, list[dict]] = {}
    families: dict[str, str] = {}
    # params as text, each distinct text decoded once (most rows repeat their benchmark's)
    decoded: dict = {}  # params text (or, for a row without params, its benchmark id) -> (params, is a cell)
    for run_id, bench_id, metric, unit, value, protocol, stats, params_text, h in (
            row for c in chunks for row in session.execute(c)):
        hw, sw = env.get(run_id, ("", ""))
        tech, impl, case_id, b_params = bench[bench_id]
        got = decoded.get(params_text)
        if got is None:
            p = loads(params_text) if params_text is not None else None
            got = decoded[params_text] = (p, bool(p) and bool(grid_axes({"params": p})))
        p, is_cell = got
        if not p:  # no params of its own: its benchmark's (a text like {} decodes alike for every benchmark)
            got = decoded.get(bench_id)
            if got is None:
                got = decoded[bench_id] = (b_params or {}, bool(grid_axes({"params": b_params or {}})))
            p, is_cell = got
        protocol = protocol if isinstance(protocol, str) else ""
        if is_cell:  # pooled per cell group by prepare(), as add_rows does
            cells.setdefault(run_id, []).append(
                {"technique": tech, "impl": impl, "case": case_id, "metric": metric, "unit": unit, "value": value,
                 "status": "ok", "stats": stats or ({"protocol": protocol} if protocol else {}), "params": p,
                 "impl_hash": h})
            continue
        kind = kinds[(metric, unit)]
        fam = families.get(protocol)
        if fam is None:
            fam = families[protocol] = family(protocol)
        key = (tech, impl, case_id, metric, hw, fam)
        if kind == FRACTION:
            kn = counts_of({"metric": metric, "unit": unit, "value": value, "stats": stats or {}, "params": p})
            if kn and kn[1] > 0:
                b.fraction[(key, sw, h)].setdefault(run_id, kn)
        elif not host_timer(protocol):
            v = _positive(value)
            if v is not None:
                b.timing[(key, sw, protocol, h)].setdefault(run_id, math.log(v))
    for run_id, rows in cells.items():
        hw, sw = env.get(run_id, ("", ""))
        b.add_rows(run_id, hw, sw, rows)
    # every run with an ok result counts as seen, whatever its metrics (the run count in the table's source)
    seen = select(Result.run_id).where(Result.status == "ok").distinct()
    b.runs.update(session.scalars(seen) if wanted is None else
                  (r for i in range(0, len(wanted), 500)
                   for r in session.scalars(seen.where(Result.run_id.in_(wanted[i:i + 500])))))
    return b


def from_session(session: Session, skip_runs: Iterable[str] = ()) -> SpreadTable:
    """The table learned from the runs stored in the database, those in skip_runs left out."""
    return from_builder(builder_from_session(session), skip_runs)


def from_builder(b: Builder, skip_runs: Iterable[str] = ()) -> SpreadTable:
    """A database Builder's table without skip_runs (the runs being judged: a run never teaches the
    spread it is judged against, or a slowdown in it would widen its own series)."""
    skip = set(skip_runs)
    return b.table(f"database ({len(b.runs - skip)} runs)", skip)


def stamp(url: Optional[str]) -> tuple:
    """What the learned table depends on, cheap to read: (runs stored, newest start); () without a database."""
    if not has_runs(url):
        return ()
    with Session(read_engine(url)) as s:
        n, newest = s.execute(select(func.count(Run.id), func.max(Run.started_at))).one()
    return (int(n), str(newest))


def learned(b: Optional[Builder], skip_runs: Iterable[str] = ()) -> SpreadTable:
    """The committed table, merged with what a database Builder has learned where it knows more; the runs
    being judged (skip_runs: the candidate) are left out of what the database teaches."""
    return committed() if b is None else committed().merged(from_builder(b, skip_runs))


def table_for(session: Optional[Session] = None, skip_runs: Iterable[str] = ()) -> SpreadTable:
    """learned() from the database of session (the committed table alone without one)."""
    return learned(builder_from_session(session) if session is not None else None, skip_runs)


def has_runs(url: Optional[str]) -> bool:
    """Is there a KernelWatch database with stored results at url (never creating one)?"""
    path = sqlite_path(resolve_url(url))
    return not (path is not None and not path.is_file()) and tables(url) >= {"runs", "results"}


def table_for_url(url: Optional[str], skip_runs: Iterable[str] = ()) -> SpreadTable:
    """table_for the database at url, read-only; the committed table alone where there is none."""
    if not has_runs(url):
        return committed()
    with Session(read_engine(url)) as s:
        return table_for(s, skip_runs)


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("paths", nargs="+", type=Path, help="result files or folders of them")
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args(argv)
    t = from_files(a.paths)
    a.out.write_text(t.to_json())
    wide = sum(1 for k in t.timings if t.timing(k, 0.028))
    print(f"{len(t.timings)} timing series, {len(t.fractions)} fraction series from {t.source}; "
          f"{wide} timing series wider than 2.8 % -> {a.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
