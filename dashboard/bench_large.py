"""A synthetic large database (default 1M results) and the time each dashboard page takes on it.

    python -m dashboard.bench_large --db /tmp/kw_1m.db [--results 1000000] [--rebuild]

Layout: 4 hardware x 2 software versions, nightly runs per hardware, 500 benchmarks x 2 metrics per
run (latency_ms with 32 samples, rel_err with 3); every 10th night each GPU run also holds probe rows
as the techniques write them: an exponent sweep (gemm_fp32_emulation_sweep, 3 schemes x 13 x 13 x
2 metrics) and a needle grid (needle_retrieval, 4 selectors x 4 contexts x 11 depths x 2 strengths).
Prints, per page, the cold time of the queries it issues and the time of a cold AppTest run.
"""
from __future__ import annotations

import argparse
import json
import random
import sqlite3
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

HARDWARE = [("NVIDIA H200", "9.0"), ("NVIDIA H100 80GB HBM3", "9.0"), ("NVIDIA A100-SXM4-80GB", "8.0"), (None, None)]
SOFTWARE = [("2.10.0+cu128", "3.5.1", "12.8"), ("2.11.0+cu130", "3.6.0", "13.0")]
TECHNIQUES = ["gemm_fp32_emulation", "exp_approx", "attention_block_sparse", "sparse_selectors", "mqar"]
PER_RUN = 1000  # 500 benchmarks x (latency_ms, rel_err)


def _schema(url: str) -> None:
    from db.engine import open_db

    open_db(url)


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


def _rows(run_id: str, bench: list[int], base: list[float], drift: float, rng: random.Random):
    for b, mu in zip(bench, base):
        m = mu * drift
        samples = [round(rng.gauss(m, 0.02 * m), 6) for _ in range(32)]
        yield (run_id, b, "latency_ms", "ms", "lower", sorted(samples)[16], "ok", None, 1, "h", "cuda-events/v1",
               "{}", json.dumps(samples), "{}")
        err = 1e-7 * (1 + (b % 7))
        yield (run_id, b, "rel_err", "1", "lower", err, "ok", None, 1, "h", None, "{}", json.dumps([err] * 3), "{}")


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
    cur.executemany("INSERT INTO results (run_id, benchmark_id, metric, unit, direction, value, status, error, "
                    "impl_version, impl_hash, protocol, params, samples, stats) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                    rows)


def build(path: Path, n_results: int = 1_000_000, seed: int = 0) -> int:
    """Create the synthetic database at path (replacing it); returns the number of results."""
    for p in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):
        p.unlink(missing_ok=True)
    _schema(f"sqlite:///{path}")
    rng = random.Random(seed)
    con = sqlite3.connect(path)
    con.execute("PRAGMA journal_mode=WAL")
    con.execute("PRAGMA synchronous=OFF")
    cur = con.cursor()
    envs, bench = _envs(cur), _benchmarks(cur)
    base = [rng.uniform(0.01, 50.0) for _ in bench]
    n_runs = max(1, n_results // (PER_RUN + 200))  # every 10th run also holds ~2,000 probe rows
    start = datetime(2026, 1, 1, 2, 0, tzinfo=timezone.utc)
    total, r = 0, 0
    while total < n_results:
        h, night = r % len(HARDWARE), r // len(HARDWARE)
        s = 0 if night < n_runs // len(HARDWARE) // 2 else 1
        run_id = f"synthetic-{r:06d}"
        when = start + timedelta(days=night, minutes=10 * h)
        cur.execute("INSERT INTO runs (id, started_at, finished_at, tier, reason, source, git_commit, git_branch, "
                    "git_dirty, environment_id, content_hash, config, ingested_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                    (run_id, when.strftime("%Y-%m-%d %H:%M:%S.000000"), None, "nightly", "nightly", "synthetic",
                     f"{rng.getrandbits(160):040x}", "main", False, envs[2 * h + s], run_id, "{}",
                     when.strftime("%Y-%m-%d %H:%M:%S.000000")))
        drift = 1.0 + (0.08 if night % 50 == 49 else 0.0) + 0.03 * s
        _insert(cur, _rows(run_id, bench, base, drift, rng))
        total += PER_RUN
        if night % 10 == 0 and HARDWARE[h][0]:
            total += _extras(run_id, cur, rng)
        if r % 100 == 99:
            con.commit()
        r += 1
    con.commit()
    con.execute("ANALYZE")
    con.close()
    return total


PAGES = ["health", "trends", "compare", "numerics", "retrieval", "claims", "cost_model"]


def time_queries(url: str) -> dict[str, float]:
    """Seconds of the uncached db.queries calls each page issues on its first load."""
    from dashboard import verdict
    from dashboard.health import pairs, windows
    from db import queries as q

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


def time_apptest(url: str) -> dict[str, float]:
    """Seconds of a cold (caches cleared) AppTest run of each page."""
    import os

    import streamlit as st
    from streamlit.testing.v1 import AppTest

    os.environ["KWATCH_DB"] = url
    app = str(Path(__file__).resolve().parent / "app.py")
    out = {}
    for page in PAGES:
        at = AppTest.from_file(app, default_timeout=120)
        at.run()
        st.cache_data.clear()
        at.switch_page(f"views/{page}.py")
        t = time.perf_counter()
        at.run()
        out[page] = time.perf_counter() - t
        if at.exception:
            raise RuntimeError(f"{page}: {at.exception[0].value}")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", default="/tmp/kw_1m.db")
    ap.add_argument("--results", type=int, default=1_000_000)
    ap.add_argument("--rebuild", action="store_true")
    a = ap.parse_args()
    path = Path(a.db)
    if a.rebuild or not path.exists():
        t = time.perf_counter()
        n = build(path, a.results)
        print(f"built {path}: {n} results in {time.perf_counter() - t:.1f} s, "
              f"{path.stat().st_size / 2**20:.0f} MiB")
    url = f"sqlite:///{path}"
    from dashboard import verdict  # noqa: F401  (scipy's import is process start-up, not page load)
    import scipy.stats  # noqa: F401

    qs, ats = time_queries(url), time_apptest(url)
    print("| page | queries, cold (s) | AppTest page run, cold cache (s) |\n| --- | --- | --- |")
    for page in PAGES:
        print(f"| {page} | {qs.get(page, float('nan')):.3f} | {ats[page]:.3f} |")


if __name__ == "__main__":
    main()
