"""Seconds each dashboard page takes to render server-side, on a synthetic 1M-result database or on
one built from every committed result file.

    python -m dashboard.bench_large --db /tmp/kw_1m.db [--results 1000000] [--rebuild]
    python -m dashboard.bench_large --committed --db /tmp/kw_committed.db [--rebuild]
    python -m dashboard.bench_large --committed --postgres [ADMIN_URL]   # the same data on PostgreSQL

Synthetic layout, shaped like real use: 4 hardware x 2 software versions; each night every hardware
writes its nightly as one run per technique (5 runs a night, 100 benchmarks x 2 metrics each:
latency_ms with 32 samples, rel_err with 3), every 7th night the whole nightly again at the same commit
(repeats), and the timing protocol moves from .../v2 to .../v3 half-way; for the last tenth of the nights
every 10th benchmark is 10 % slower, and the build runs `kwatch detect` so Alerts has change points to list. Every 10th night each GPU
nightly also holds probe rows as the techniques write them: an exponent sweep
(gemm_fp32_emulation_sweep, 3 schemes x 13 x 13 x 2 metrics) and a needle grid (needle_retrieval,
4 selectors x 4 contexts x 11 depths x 2 strengths).
Prints the load average, then per page the cold time of the queries it issues (synthetic only) and
the time of a cold (caches cleared) AppTest run of the page. With --postgres the SQLite file is copied
into a new database on that PostgreSQL server (dashboard.bench_pg), timed there, and the database dropped.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import sqlite3
import subprocess
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Optional

import streamlit as st
from streamlit.testing.v1 import AppTest

from dashboard import bench_pg, verdict
from dashboard.health import pairs, windows
from db import queries as q
from db.engine import open_db
from db.ingest import ingest_docs
from db.samples import pack_json
from db.validate import load_and_validate, read_text

HARDWARE = [("NVIDIA H200", "9.0"), ("NVIDIA H100 80GB HBM3", "9.0"), ("NVIDIA A100-SXM4-80GB", "8.0"), (None, None)]
SOFTWARE = [("2.10.0+cu128", "3.5.1", "12.8"), ("2.11.0+cu130", "3.6.0", "13.0")]
TECHNIQUES = ["gemm_fp32_emulation", "exp_approx", "attention_block_sparse", "sparse_selectors", "mqar"]
PER_RUN = 200  # one technique's 100 benchmarks x (latency_ms, rel_err)
PROTOCOLS = ("cuda-events+l2flush+graph/v2", "cuda-events+l2flush+graph/v3")
REPEAT_EVERY = 7  # nights whose nightly runs twice at one commit
PROBE_ROWS = 3 * 13 * 13 * 2 + 4 * 4 * 11 * 2  # a GPU nightly's probe rows, every 10th night


def _envs(cur) -> list[int]:
    ids = []
    for h, (gpu, cc) in enumerate(HARDWARE):
        for s, (torch, triton, cuda) in enumerate(SOFTWARE):
            raw = {"gpu_name": gpu, "compute_capability": cc, "torch": torch, "triton": triton, "cuda": cuda,
                   "driver": "580.159.04" if gpu else None, "python": "3.12.3", "cpu": "Synthetic Xeon"}
            cur.execute("INSERT INTO environments (fingerprint, hardware_key, software_key, device, gpu_name, "
                        "compute_capability, driver, cuda, torch, triton, python, cpu, raw) "
                        "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                        (f"fp{h}{s}", f"hw{h:014d}", f"sw{s:014d}", "cuda" if gpu else "cpu", gpu, cc,
                         raw["driver"], cuda if gpu else None, torch, triton, "3.12.3", "Synthetic Xeon",
                         json.dumps(raw)))
            ids.append(cur.lastrowid)
    return ids


def _benchmarks(cur) -> list[int]:
    ids = []
    for t in TECHNIQUES:
        for i in range(10):
            for c in range(10):
                cur.execute("INSERT INTO benchmarks (technique, impl, case_id, params) VALUES (?,?,?,?)",
                            (t, f"impl_{i}", f"case_{c}", json.dumps({"n": 256 << c})))
                ids.append(cur.lastrowid)
    return ids


def _rows(run_id: str, bench: list[int], base: list[float], drift: float, protocol: str, rng: random.Random):
    for b, mu in zip(bench, base):
        m = mu * drift
        samples = [round(rng.gauss(m, 0.02 * m), 6) for _ in range(32)]
        yield (run_id, b, "latency_ms", "ms", "lower", sorted(samples)[16], "ok", None, 1, "h", protocol,
               "{}", json.dumps(samples), json.dumps({"protocol": protocol, "n": 32}))
        err = 1e-7 * (1 + (b % 7))
        yield (run_id, b, "rel_err", "1", "lower", err, "ok", None, 1, "h", None, "{}", json.dumps([err] * 3),
               json.dumps({"tolerance": 1e-5}))


GRID = (-140, -133, -126, -118, -112, -110, -64, 0, 64, 111, 120, 126, 127)  # the sweep's coarse grid


def _bench_id(cur, technique: str, impl: str, case: str, params: dict) -> int:
    cur.execute("INSERT OR IGNORE INTO benchmarks (technique, impl, case_id, params) VALUES (?,?,?,?)",
                (technique, impl, case, json.dumps(params)))
    return cur.execute("SELECT id FROM benchmarks WHERE technique=? AND impl=? AND case_id=?",
                       (technique, impl, case)).fetchone()[0]


def _extras(run_id: str, cur, rng: random.Random) -> int:
    """Probe rows as the techniques write them (one case id per point, params in the row): an
    exponent sweep (gemm_fp32_emulation_sweep) and a needle grid (needle_retrieval)."""
    rows = []
    for scheme in ("triton_dot_bf16x3", "triton_dot_bf16x6", "cublas_fp32"):
        for ea in GRID:
            for eb in GRID:
                params = {"m": 256, "n": 256, "k": 256, "dist": "unit_exp", "exp_a": ea, "exp_b": eb}
                b = _bench_id(cur, "gemm_fp32_emulation_sweep", scheme, f"sweep_ea{ea:+d}_eb{eb:+d}", params)
                bad = scheme == "triton_dot_bf16x6" and not (-110 <= ea <= 111 and -110 <= eb <= 111)
                err = 1e-3 if bad else 2e-7 * (1 + rng.random())
                rows.append((run_id, b, "rel_err", "1", "lower", err, "ok", None, 1, "h", None,
                             json.dumps(params), "[]", "{}"))
                rows.append((run_id, b, "within_fp32", "bool", "higher", 0.0 if bad else 1.0, "ok", None, 1,
                             "h", None, json.dumps(params), "[]", "{}"))
    for sel in ("exact_topk", "mean_pool", "max_pool", "msa_index"):
        for ctx in (4096, 16384, 65536, 131072):
            for d in range(11):
                for strength in (2.0, 4.0):
                    params = {"ctx": ctx, "depth": d / 10, "strength": strength}
                    b = _bench_id(cur, "needle_retrieval", sel, f"ctx{ctx // 1024}k_depth{d * 10}_s{strength:g}",
                                  params)
                    v = 1.0 if sel == "exact_topk" else float(rng.random() > ctx / 262144)
                    rows.append((run_id, b, "recall", "1", "higher", v, "ok", None, 1, "h", None,
                                 json.dumps(params), "[]", "{}"))
    _insert(cur, rows)
    return len(rows)


def _insert(cur, rows) -> None:
    """Result rows as tuples up to `samples` (its JSON text) and `stats`; samples_f64 made here, as ingest does."""
    cur.executemany("INSERT INTO results (run_id, benchmark_id, metric, unit, direction, value, status, error, "
                    "impl_version, impl_hash, protocol, params, samples, stats, samples_f64) "
                    "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", ((*r, pack_json(r[12])) for r in rows))


def build(path: Path, n_results: int = 1_000_000, seed: int = 0) -> int:
    """Create the synthetic database at path (replacing it); returns the number of results."""
    for p in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):
        p.unlink(missing_ok=True)
    open_db(f"sqlite:///{path}")  # the schema
    rng = random.Random(seed)
    con = sqlite3.connect(path)
    con.execute("PRAGMA journal_mode=WAL")
    con.execute("PRAGMA synchronous=OFF")
    cur = con.cursor()
    envs, bench = _envs(cur), _benchmarks(cur)
    base = [rng.uniform(0.01, 50.0) for _ in bench]
    per_tech = len(bench) // len(TECHNIQUES)
    gpus = sum(1 for gpu, _ in HARDWARE if gpu)
    per_night = len(HARDWARE) * PER_RUN * len(TECHNIQUES) * (1 + 1 / REPEAT_EVERY) + gpus * PROBE_ROWS / 10
    nights = max(1, round(n_results / per_night))
    today = datetime.now(timezone.utc).replace(hour=2, minute=0, second=0, microsecond=0)
    start = today - timedelta(days=nights)  # the last night is recent, as Alerts' age filter expects
    total, night, r = 0, 0, 0
    while total < n_results:
        s = 0 if night < nights // 2 else 1
        protocol = PROTOCOLS[0 if night < nights // 2 else 1]
        drift = 1.0 + (0.08 if night % 50 == 49 else 0.0) + 0.03 * s
        for h in range(len(HARDWARE)):
            commit = f"{rng.getrandbits(160):040x}"
            for rep in range(2 if night % REPEAT_EVERY == REPEAT_EVERY - 1 else 1):
                for t in range(len(TECHNIQUES)):
                    run_id = f"synthetic-{r:07d}"
                    when = start + timedelta(days=night, hours=3 * rep, minutes=30 * h + 5 * t)
                    stamp = when.strftime("%Y-%m-%d %H:%M:%S.000000")
                    cur.execute("INSERT INTO runs (id, started_at, finished_at, tier, reason, source, git_commit, "
                                "git_branch, git_dirty, environment_id, content_hash, config, ingested_at) "
                                "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                                (run_id, stamp, None, "nightly", "nightly", "synthetic", commit, "main", False,
                                 envs[2 * h + s], run_id, "{}", stamp))
                    sl = slice(t * per_tech, (t + 1) * per_tech)
                    # for the last tenth of the nights every 10th benchmark is 10 % slower: steps to detect
                    mus = [m * 1.1 if night >= 9 * nights // 10 and i % 10 == 0 else m
                           for i, m in enumerate(base[sl])]
                    _insert(cur, _rows(run_id, bench[sl], mus, drift, protocol, rng))
                    total += 2 * per_tech
                    if t == 0 and rep == 0 and night % 10 == 0 and HARDWARE[h][0]:
                        total += _extras(run_id, cur, rng)
                    r += 1
        if night % 10 == 9:
            con.commit()
        night += 1
    con.commit()
    con.execute("ANALYZE")
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.close()
    return total


PAGES = ["health", "alerts", "trends", "compare", "hardware", "runs", "numerics", "retrieval", "claims", "cost_model"]
ROOT = Path(__file__).resolve().parent.parent


def committed_files(root: Path = ROOT / "results") -> list[Path]:
    """Every committed result file (schema 1), `.json.gz` included; raw benchmark dumps are left out."""
    out = []
    for p in sorted(root.rglob("*.json*")):
        if p.name.endswith((".json", ".json.gz")) and json.loads(read_text(p)).get("schema") is not None:
            out.append(p)
    return out


def build_committed(path: Path, files: Optional[list[Path]] = None) -> int:
    """Create the database at path (replacing it) from the committed result files; returns its results."""
    for p in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):
        p.unlink(missing_ok=True)
    files = committed_files() if files is None else files
    session = open_db(f"sqlite:///{path}")
    for i in range(0, len(files), 20):
        ingest_docs(session, [(str(p), load_and_validate(p)) for p in files[i:i + 20]])
    con = sqlite3.connect(path)
    n = con.execute("SELECT count(*) FROM results").fetchone()[0]
    con.execute("ANALYZE")
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # the read-only dashboard cannot fold the WAL in
    con.close()
    return n


def time_queries(url: str) -> dict[str, float]:
    """Seconds of the uncached db.queries calls each page issues on its first load."""
    out = {}
    t = time.perf_counter()
    runs = q.runs(url)
    for _hw, _key, inside, before in windows(runs, "nightly"):
        cand, base = pairs(q.result_index(url, inside + before), inside, inside + before)
        verdict.compare(q.results_by_id(url, base), q.results_by_id(url, cand))
    out["health"] = time.perf_counter() - t
    t = time.perf_counter()
    cat = q.catalog(url)
    first = cat.iloc[0]
    q.runs(url)
    q.series_points(url, [first["benchmark_id"]], first["metric"])
    q.change_points(url, first["technique"], first["impl"], first["case_id"], first["metric"])
    q.acknowledgements(url, first["technique"], first["impl"], first["case_id"], first["metric"])
    out["trends"] = time.perf_counter() - t
    t = time.perf_counter()
    runs = q.runs(url)
    verdict.compare(q.run_results(url, runs["run_id"].iloc[1]), q.run_results(url, runs["run_id"].iloc[0]))
    out["compare"] = time.perf_counter() - t
    t = time.perf_counter()
    r = q.technique_runs(url, "gemm_fp32_emulation_sweep", ["rel_err"], "exp_a")
    q.technique_results(url, "gemm_fp32_emulation_sweep", ["rel_err"], r["run_id"].iloc[:1], "exp_a")
    out["numerics"] = time.perf_counter() - t
    t = time.perf_counter()
    r = q.technique_runs(url, "needle_retrieval", ["recall"], "depth")
    q.technique_results(url, "needle_retrieval", ["recall"], r["run_id"].iloc[:1], "depth")
    out["retrieval"] = time.perf_counter() - t
    return out


def time_apptest(url: str, pages: list[str] = PAGES) -> dict[str, tuple[float, float]]:
    """(wall, CPU) seconds of a cold (caches cleared) AppTest run of each page; CPU is the process's
    (the page runs in one script thread), which a loaded machine does not inflate as it does wall time."""
    os.environ["KWATCH_DB"] = url
    app = str(Path(__file__).resolve().parent / "app.py")
    out = {}
    for page in pages:
        at = AppTest.from_file(app, default_timeout=120)
        at.run()
        st.cache_data.clear()
        at.switch_page(f"views/{page}.py")
        t, c = time.perf_counter(), time.process_time()
        at.run()
        out[page] = (time.perf_counter() - t, time.process_time() - c)
        if at.exception:
            raise RuntimeError(f"{page}: {at.exception[0].value}")
    return out


def detect(path: Path) -> int:
    """Store the change points `kwatch detect` finds (what the Alerts page lists), running the command
    as an engineer would (the dashboard does not import ci/); returns how many."""
    out = path.with_name(path.name + ".detect.json")
    subprocess.run([sys.executable, "-c", "from ci.cli import main; main()", "detect", "--db", f"sqlite:///{path}",
                    "--json", str(out)], check=True, capture_output=True, text=True, cwd=ROOT)
    found = json.loads(out.read_text())["changes"]
    out.unlink()
    con = sqlite3.connect(path)
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.close()
    return len(found)


def table(apptest: dict[str, tuple[float, float]], queries: Optional[dict[str, float]] = None) -> str:
    """The Markdown table of seconds per page."""
    lines = ["| page | queries, cold (s) | AppTest page run, cold cache: wall (s) | CPU (s) |",
             "| --- | --- | --- | --- |"]
    for page, (wall, cpu) in apptest.items():
        q = (queries or {}).get(page)
        lines.append(f"| {page} | {'—' if q is None else f'{q:.3f}'} | {wall:.3f} | {cpu:.3f} |")
    return "\n".join(lines)


def main(argv: Optional[list[str]] = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", default=None, help="default /tmp/kw_1m.db, or /tmp/kw_committed.db with --committed")
    ap.add_argument("--committed", action="store_true", help="a database of every committed result file")
    ap.add_argument("--results", type=int, default=1_000_000, help="synthetic results to write")
    ap.add_argument("--rebuild", action="store_true")
    ap.add_argument("--no-detect", action="store_true", help="build without running the change-point detector")
    ap.add_argument("--pages", default=",".join(PAGES), help="comma-separated pages to time")
    ap.add_argument("--postgres", nargs="?", const=bench_pg.ADMIN, default=None, metavar="ADMIN_URL",
                    help=f"time a PostgreSQL copy of the database, made on this server (default {bench_pg.ADMIN}) "
                         "and dropped after")
    a = ap.parse_args(argv)
    path = Path(a.db or ("/tmp/kw_committed.db" if a.committed else "/tmp/kw_1m.db"))
    if a.rebuild or not path.exists():
        t = time.perf_counter()
        n = build_committed(path) if a.committed else build(path, a.results)
        print(f"built {path}: {n} results in {time.perf_counter() - t:.1f} s, "
              f"{path.stat().st_size / 2**20:.0f} MiB", flush=True)
        if not a.no_detect:
            t = time.perf_counter()
            print(f"kwatch detect: {detect(path)} change points in {time.perf_counter() - t:.1f} s", flush=True)
    # One-time imports are process start-up, not page load: the claims registry pulls torch in through
    # suite.lib.selectors (+1 s on the first Claims view after a server start), so it is loaded here.
    from suite.claims.registry import all_claims

    all_claims()
    pages = [p for p in a.pages.split(",") if p]
    if a.postgres is None:
        run(f"sqlite:///{path}", pages, not a.committed)
        return
    with bench_pg.twin(path, a.postgres) as url:
        t = time.perf_counter()
        rows = bench_pg.copy_tables(path, url)
        print(f"copied into PostgreSQL: {rows.get('results', 0)} "
              f"results in {time.perf_counter() - t:.1f} s", flush=True)
        run(url, pages, not a.committed)


def run(url: str, pages: list[str], with_queries: bool) -> None:
    """Time the pages on url (and, with_queries, the queries alone) and print the table."""
    load = os.getloadavg()
    qs = time_queries(url) if with_queries else None
    ats = time_apptest(url, pages)
    print(f"{os.cpu_count()} CPUs, load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} before, "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())} after")
    print(table(ats, qs))


if __name__ == "__main__":
    main()
