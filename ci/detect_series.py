"""The recorded series the detector benchmark replays: result files read as latency series (raw
samples, or whole-run medians across repeated runs) and the stable tune/test split of those series."""
from __future__ import annotations

import hashlib
import json
from functools import lru_cache
from pathlib import Path

import numpy as np

from db.noise import night_cv
from runners.env import HARDWARE_KEYS, SOFTWARE_KEYS, key_of
from runners.resultfile import UNREADABLE, read_text
from runners.timing import protocol_version


def result_docs(paths: list[str]) -> list[tuple[str, dict]]:
    """(file name, document) of each path that holds a schema-1 result file; other JSON (e.g. a
    microbenchmark's own format) and unreadable files are left out."""
    out = []
    for p in paths:
        try:
            doc = json.loads(read_text(p))
        except UNREADABLE:
            continue
        if isinstance(doc, dict) and doc.get("schema") == 1:
            out.append((Path(p).name, doc))
    return out


def technique_runs(folder: str | Path = "results/h200") -> list[str]:
    """The single-technique result files at the top of a results folder, plain or gzipped, sorted:
    neither the whole nightlies (nightly_*, the same kernels again) nor noise studies."""
    return sorted(str(p) for p in Path(folder).glob("*.json*") if p.name.endswith((".json", ".json.gz"))
                  and "noise" not in p.name and not p.name.startswith("nightly_"))


def noise_series(paths: list[str], min_samples: int = 200) -> list[dict]:
    """Latency series (raw samples in recorded order) of the given result files."""
    out = []
    for name, doc in result_docs(paths):
        for r in doc["results"]:
            s = [x for x in r.get("samples") or [] if x is not None and x > 0]
            if r["status"] == "ok" and r["metric"] == "latency_ms" and len(s) >= min_samples:
                out.append({"file": name, "series": f"{r['technique']}/{r['impl']}/{r['case']}",
                            "samples": s})
    return out


def run_series(paths: list[str], min_runs: int = 8, newest_protocol: bool = False) -> list[dict]:
    """Latency series across repeated whole runs: per (hardware, software, technique, impl, case,
    protocol), the whole-run medians of every result file that holds it (series in fewer than
    `min_runs` files are left out) and each run's raw samples (`run_samples`). The real night-to-night noise, drift between runs included.
    newest_protocol: of one kernel and case timed under several protocol versions, keep the newest."""
    groups: dict[tuple, list[float]] = {}
    samples: dict[tuple, list[list[float]]] = {}
    for _, doc in result_docs(paths):
        env = doc["run"]["env"]
        hw, sw = key_of(env, HARDWARE_KEYS), key_of(env, SOFTWARE_KEYS)
        for r in doc["results"]:
            v = r.get("value")
            if r["status"] == "ok" and r["metric"] == "latency_ms" and isinstance(v, (int, float)) and v > 0:
                key = (hw, sw, r["technique"], r["impl"], r["case"], (r.get("stats") or {}).get("protocol"))
                groups.setdefault(key, []).append(float(v))
                samples.setdefault(key, []).append([float(x) for x in r.get("samples") or [] if x is not None])
    kept = {k: v for k, v in groups.items() if len(v) >= min_runs}
    if newest_protocol:
        newest: dict[tuple, tuple] = {}
        for k in kept:
            if k[:5] not in newest or protocol_version(k[5]) > protocol_version(newest[k[:5]][5]):
                newest[k[:5]] = k
        kept = {k: kept[k] for k in newest.values()}
    return [{"file": f"{len(v)} runs", "series": "/".join(k[2:5]), "protocol": k[5], "run_values": v,
             "run_samples": samples[k]} for k, v in sorted(kept.items(), key=lambda kv: kv[0][2:5])]


SPLIT_RUNS = ("results/h200/repeats/rep_*.json.gz", "results/h200/repeats_v2/rep_*.json.gz",
              "results/h200/repeats_v3_full/rep_*.json.gz", "results/h200/placements/pl_*.json.gz",
              "results/h200/plain_noise/night_*.json.gz")  # every run set of the benchmark
QUIET = 0.015  # night CV of the series whose 5% recall the target names


def _digest(ser: dict) -> bytes:
    return hashlib.sha256(f"{ser['series']}|{ser.get('protocol') or ''}".encode()).digest()


@lru_cache(maxsize=1)
def _split_table() -> dict[tuple, str]:
    """(series, protocol) -> half for every series of SPLIT_RUNS (10+ runs): within each stratum (run
    set as named by the series' first part, protocol, night CV <= QUIET or not), series ordered by the
    SHA-256 of name and protocol alternate "tune", "test", ..., so quiet and noisy series of each run
    set fall in both halves."""
    strata: dict[tuple, list[dict]] = {}
    root = Path(__file__).resolve().parents[1]
    for s in run_series(sorted({str(f) for p in SPLIT_RUNS for f in root.glob(p)}), 10):
        key = (s["series"].split("/")[0], s["protocol"] or "", night_cv(s["run_values"]) <= QUIET)
        strata.setdefault(key, []).append(s)
    out: dict[tuple, str] = {}
    for members in strata.values():
        for i, s in enumerate(sorted(members, key=_digest)):
            out.setdefault((s["series"], s["protocol"]), "tune" if i % 2 == 0 else "test")
    return out


def split_half(ser: dict) -> str:
    """The half a series belongs to for out-of-sample settings: "tune" or "test", stratified
    (_split_table); a series outside the benchmark's run sets by the parity of its digest's first byte.
    Stable across runs and machines."""
    half = _split_table().get((ser["series"], ser.get("protocol")))
    return half or ("tune" if _digest(ser)[0] % 2 == 0 else "test")


def two_levels(values: list[float], gap: float = 0.02, min_side: int = 2) -> bool:
    """Whether a series' night values fall in two levels: a gap of at least `gap` (relative) between
    consecutive sorted values with at least `min_side` nights on each side."""
    x = np.sort(np.log(np.asarray(values, dtype=float)))
    d = np.diff(x)
    i = int(np.argmax(d)) if len(d) else 0
    return bool(len(d) and d[i] >= np.log1p(gap) and min(i + 1, len(x) - i - 1) >= min_side)
