"""Nightly histories replayed from recorded noise: night values drawn from real samples or whole runs,
nightly result documents built from one real run, and the public-path replay through `kwatch nightly`."""
from __future__ import annotations

import copy
import tempfile
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np

from ci.nightly import nightly
from db.detector import DetectorSettings, online_changes


def replay_series(ser: dict, nights: int, block: int, rng: np.random.Generator, scale: float = 1.0) -> np.ndarray:
    """Night values of one series: drawn from its real whole runs when it has them (`run_values`,
    independently per night), else replayed from its within-run samples (`replay`)."""
    if "run_values" not in ser:
        return replay(ser["samples"], nights, block, rng, scale)
    x = np.asarray(ser["run_values"], dtype=float)
    med = float(np.median(x))
    return med + (rng.choice(x, nights) - med) * scale


def replay(samples: list[float], nights: int, block: int, rng: np.random.Generator, scale: float = 1.0) -> np.ndarray:
    """Night values: medians of consecutive blocks from a random offset; residuals around the series
    median multiplied by `scale` (1 = the noise as recorded)."""
    x = np.asarray(samples, dtype=float)
    med = float(np.median(x))
    start = int(rng.integers(0, len(x)))
    idx = (start + np.arange(nights * block)) % len(x)
    vals = np.median(x[idx].reshape(nights, block), axis=1)
    return med + (vals - med) * scale


def public_path(series: list[dict], histories: int = 4, nights: int = 40, step: float = 0.05, seed: int = 0,
                workdir: Path | None = None, det: DetectorSettings = DetectorSettings()) -> dict:
    """Replay histories night by night through ci.nightly.nightly (what `kwatch nightly --result` runs):
    per history a fresh SQLite database, one result document per night holding every series (each night
    one of its real runs drawn at random, value and samples; half the series, alternating, get a `step`
    from a random night on). Counts what fails each night's report per series (ci.report_nightly.failed:
    a new detector regression or a gated regression against the previous night), from night 1 on, and
    checks the detector's alerts are those of db.detector.online_changes on the same values."""
    rng = np.random.default_rng(seed)
    env = {"device": "cuda", "gpu_name": "replay", "compute_capability": None, "sm_count": None, "driver": None,
           "cuda": None, "torch": None, "triton": None, "python": None, "cpu": None}
    tally = {"false_alarms": 0, "unnamed_false_alarms": 0, "gate_false_alarms": 0, "series_nights": 0, "steps": 0,
             "found_within_2_nights": 0, "same": True}
    t0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
    warmup = det.min_nights - 1
    for h in range(histories):
        vals, smp, at = {}, {}, {}
        for i, ser in enumerate(series):
            pick = rng.integers(0, len(ser["run_values"]), nights)
            v = np.asarray(ser["run_values"], dtype=float)[pick]
            f = np.ones(nights)
            if (i + h) % 2:
                at[ser["series"]] = int(rng.integers(max(warmup + 2, nights // 3), nights - 3))
                f[at[ser["series"]]:] = 1 + step
            vals[ser["series"]] = v * f
            runs = ser.get("run_samples") or [[x] for x in ser["run_values"]]
            smp[ser["series"]] = [[x * f[n] for x in (runs[j] or [ser["run_values"][j]])] for n, j in enumerate(pick)]
        with tempfile.TemporaryDirectory(dir=workdir) as tmp:
            db = f"sqlite:///{Path(tmp) / 'kw.db'}"
            got: set[tuple[str, int]] = set()  # the detector's new regressions
            failing: set[tuple[str, int]] = set()  # what failed the night: those and the gate's
            unnamed: set[tuple[str, int]] = set()  # of them, on a series that night's report did not call too noisy
            gate: set[tuple[str, int]] = set()
            for n in range(nights):
                rows = []
                for name, v in vals.items():
                    technique, impl, case = name.split("/", 2)
                    rows.append({"technique": technique, "impl": impl, "impl_version": 1, "impl_hash": None,
                                 "case": case, "params": {}, "metric": "latency_ms", "unit": "ms",
                                 "direction": "lower", "value": float(v[n]), "samples": smp[name][n],
                                 "stats": {}, "status": "ok", "error": None})
                doc = {"schema": 1, "results": rows,
                       "run": {"id": f"h{h}n{n:03d}", "started_at": (t0 + timedelta(days=n)).isoformat(),
                               "finished_at": None, "tier": "nightly", "reason": "replay", "env": env,
                               "git": {"commit": None, "branch": None, "dirty": None}}}
                summary, _ = nightly(db, doc, Path(tmp) / "report")
                named = {d["series"].rsplit("/", 1)[0] for d in summary["too_noisy"]}
                now = {c.key.label().rsplit("/", 1)[0] for c in summary["new_regressions"]}
                by_gate = {r["series"].rsplit("/", 1)[0] for r in summary["failing_against_previous"]}
                got |= {(name, n) for name in now}
                gate |= {(name, n) for name in by_gate}
                failing |= {(name, n) for name in now | by_gate}
                unnamed |= {(name, n) for name in (now | by_gate) - named}
        want = {(name, a.night) for name, v in vals.items() for a in online_changes(list(v), det)
                if a.change.rel_change > 0}
        tally["same"] &= got == want
        for name, v in vals.items():
            fails = sorted(n for nm, n in failing if nm == name)
            end = at.get(name, nights)
            tally["false_alarms"] += sum(1 for n in fails if 1 <= n < end)
            tally["unnamed_false_alarms"] += sum(1 for n in fails if 1 <= n < end and (name, n) in unnamed)
            tally["gate_false_alarms"] += sum(1 for n in fails if 1 <= n < end and (name, n) in gate)
            tally["series_nights"] += max(end - 1, 0)
            if name in at:
                tally["steps"] += 1
                tally["found_within_2_nights"] += any(0 <= n - end <= 2 for n in fails)
    return {"histories": histories, "nights": nights, "step": step, "series": len(series),
            "false_alarms": tally["false_alarms"], "series_nights": tally["series_nights"],
            "false_alarms_on_series_the_report_did_not_call_too_noisy": tally["unnamed_false_alarms"],
            "false_alarms_by_the_gate_against_the_previous_night": tally["gate_false_alarms"],
            "false_alarms_per_1000_series_nights": 1000 * tally["false_alarms"] / max(tally["series_nights"], 1),
            "steps": tally["steps"], "found_within_2_nights": tally["found_within_2_nights"],
            "same_as_internal": tally["same"]}


def replay_runs(doc: dict, nights: int, block: int = 10, steps: dict | None = None, seed: int = 0) -> list[dict]:
    """Nightly result documents replayed from one real run: night i's samples of each timing series are
    the i-th block of its recorded samples (wrapping), values their median; steps = {(impl, case): (night,
    factor)} multiplies latency (and divides tflops) from that night on. Other rows are copied."""
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
