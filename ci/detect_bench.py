"""Benchmark of the change-point detector on replayed real noise with injected steps.

Noise: the raw timing samples of committed H200 result files, in their recorded order. A "night" is
the median of `block` consecutive samples; a history of `nights` nights replays consecutive blocks
from a random offset (wrapping around). Steps of +2%..+20% are injected at a random night; the
detectors run online (one night at a time). Reported per detector and step size: recall within 2
nights, recall by the end, median delay, and false alarms per 1000 series-nights (alerts on step-free
nights: whole histories without a step and the nights before a step).
"""
from __future__ import annotations

import glob
import json
import time
from dataclasses import asdict
from pathlib import Path

import numpy as np

from ci.detect_core import PeltSettings, online_pelt, threshold_alert, zscore_alert


def noise_series(paths: list[str], min_samples: int = 200) -> list[dict]:
    """Latency series (raw samples in recorded order) of the given result files."""
    out = []
    for p in paths:
        doc = json.loads(Path(p).read_text())
        for r in doc["results"]:
            s = [x for x in r.get("samples") or [] if x is not None and x > 0]
            if r["status"] == "ok" and r["metric"] == "latency_ms" and len(s) >= min_samples:
                out.append({"file": Path(p).name, "series": f"{r['technique']}/{r['impl']}/{r['case']}",
                            "samples": s})
    return out


def replay(samples: list[float], nights: int, block: int, rng: np.random.Generator, scale: float = 1.0) -> np.ndarray:
    """Night values: medians of consecutive blocks from a random offset; residuals around the series
    median multiplied by `scale` (1 = the noise as recorded)."""
    x = np.asarray(samples, dtype=float)
    med = float(np.median(x))
    start = int(rng.integers(0, len(x)))
    idx = (start + np.arange(nights * block)) % len(x)
    vals = np.median(x[idx].reshape(nights, block), axis=1)
    return med + (vals - med) * scale


def _online_simple(values: np.ndarray, rule, warmup: int) -> list[int]:
    return [n for n in range(warmup, len(values)) if rule(list(values[:n]), float(values[n]))]


def evaluate(series: list[dict], steps=(0.02, 0.05, 0.10, 0.20), reps: int = 20, nights: int = 60,
             block: int = 10, warmup: int = 10, scale: float = 1.0, seed: int = 0,
             pelt: PeltSettings = PeltSettings()) -> dict:
    """Run the three detectors on null and stepped replays; returns the figures per detector."""
    rng = np.random.default_rng(seed)
    detectors = {
        "pelt (ruptures)": lambda v: [n for n, _ in online_pelt(list(v), pelt, start=warmup)],
        "conbench z-score |z|>5, lookback 20": lambda v: _online_simple(v, zscore_alert, warmup),
        "fixed 5% vs median of last 5": lambda v: _online_simple(v, threshold_alert, warmup),
    }
    stats = {d: {"false_alarms": 0, "clean_nights": 0, "steps": {str(s): {"n": 0, "found2": 0, "found": 0, "delays": []}
                                                                 for s in steps}} for d in detectors}
    for ser in series:
        for _ in range(reps):
            base = replay(ser["samples"], nights, block, rng, scale)
            cases = [(None, base)]
            for st in steps:
                at = int(rng.integers(warmup + 10, nights - 10))
                v = base.copy()
                v[at:] *= 1.0 + st
                cases.append(((st, at), v))
            for name, det in detectors.items():
                d = stats[name]
                for step, v in cases:
                    alerts = det(v)
                    first_clean = warmup
                    if step is None:
                        d["false_alarms"] += sum(1 for n in alerts if n >= first_clean)
                        d["clean_nights"] += nights - first_clean
                        continue
                    st, at = step
                    d["false_alarms"] += sum(1 for n in alerts if first_clean <= n < at)
                    d["clean_nights"] += at - first_clean
                    after = [n - at for n in alerts if n >= at]
                    e = d["steps"][str(st)]
                    e["n"] += 1
                    if after:
                        e["found"] += 1
                        e["delays"].append(after[0])
                        e["found2"] += after[0] <= 2
    out = {}
    for name, d in stats.items():
        out[name] = {"false_alarms_per_1000_series_nights": 1000 * d["false_alarms"] / max(d["clean_nights"], 1),
                     "false_alarms": d["false_alarms"], "clean_series_nights": d["clean_nights"],
                     "steps": {s: {"cases": e["n"], "recall_within_2_nights": e["found2"] / max(e["n"], 1),
                                   "recall_by_end": e["found"] / max(e["n"], 1),
                                   "median_delay_nights": float(np.median(e["delays"])) if e["delays"] else None,
                                   "mean_delay_nights": float(np.mean(e["delays"])) if e["delays"] else None}
                               for s, e in d["steps"].items()}}
    return out


def night_noise(series: list[dict], block: int) -> list[dict]:
    """Per series: the relative spread (robust CV) of its night values, for the report."""
    out = []
    for s in series:
        x = np.asarray(s["samples"])
        n = len(x) // block
        nights = np.median(x[: n * block].reshape(n, block), axis=1)
        med = float(np.median(nights))
        out.append({"series": s["series"], "file": s["file"], "samples": len(x), "nights": n,
                    "night_cv_robust": float(1.4826 * np.median(np.abs(nights - med)) / med)})
    return out


def run_benchmark(paths: list[str] | None = None, reps: int = 20, scales=(1.0, 3.0, 10.0), block: int = 10,
                  seed: int = 0) -> dict:
    """The whole benchmark over the committed H200 files, at several noise scales."""
    paths = paths or sorted(p for p in glob.glob("results/h200/*.json"))
    series = noise_series(paths, min_samples=block * 20)
    t0 = time.time()
    doc = {"method": __doc__.strip(), "pelt_settings": asdict(PeltSettings()), "block": block, "reps": reps,
           "nights": 60, "files": [Path(p).name for p in paths], "series": night_noise(series, block),
           "by_noise_scale": {}}
    for sc in scales:
        doc["by_noise_scale"][str(sc)] = evaluate(series, reps=reps, block=block, scale=sc, seed=seed)
    doc["seconds"] = round(time.time() - t0, 1)
    return doc


def replay_runs(doc: dict, nights: int, block: int = 10, steps: dict | None = None, seed: int = 0) -> list[dict]:
    """Nightly result documents replayed from one real run: night i's samples of each timing series are
    the i-th block of its recorded samples (wrapping), values their median; steps = {(impl, case): (night,
    factor)} multiplies latency (and divides tflops) from that night on. Other rows are copied."""
    import copy
    from datetime import datetime, timedelta

    steps = steps or {}
    t0 = datetime.fromisoformat(doc["run"]["started_at"].replace("Z", "+00:00"))
    lat = {(r["impl"], r["case"]): r["samples"] for r in doc["results"]
           if r["metric"] == "latency_ms" and r["status"] == "ok" and r["samples"]}
    runs = []
    for i in range(nights):
        d = copy.deepcopy(doc)
        d["run"]["id"] = f"{doc['run']['id'][:40]}-n{i:03d}"
        d["run"]["started_at"] = (t0 + timedelta(days=i)).isoformat()
        d["run"]["finished_at"] = None
        d["run"]["tier"] = "nightly"
        d["run"]["reason"] = "nightly-replay"
        for r in d["results"]:
            key = (r["impl"], r["case"])
            if key not in lat or r["metric"] not in ("latency_ms", "tflops") or r["status"] != "ok":
                continue
            src = lat[key]
            blk = [src[(i * block + j) % len(src)] for j in range(block)]
            at, factor = steps.get(key, (nights + 1, 1.0))
            f = factor if i >= at else 1.0
            blk = [x * f for x in blk]
            if r["metric"] == "tflops":
                scale = r["value"] * float(np.median(src))  # flops / 1e9 in the file's units
                blk = [scale / x for x in blk]
            r["samples"] = blk
            r["value"] = float(np.median(blk))
        runs.append(d)
    return runs
