"""Out-of-sample settings for the shipped detector: a grid of DetectorSettings scored on the tuning
half of the benchmark's series only (ci.detect_series.split_half, by a hash of the series' name and
protocol), the choice made by a fixed rule; `kwatch detect-bench --split test` then gives the held-out
figures per noise class with the chosen settings.

The noisy floor's size is not tuned (1 x the base resolution, db.detector), nor noisy_ref (fixed by the
rank rule's bound); the margin above 5% from which both apply is. kappa is fixed at 1: on the previous split no setting of it (0.5-1.5) changed a figure."""
from __future__ import annotations

import glob
import itertools
import json
from dataclasses import asdict, replace
from multiprocessing import Pool
from pathlib import Path

import typer

from ci.detect_bench import SHIPPED, evaluate, night_noise
from ci.detect_series import QUIET, run_series, split_half, two_levels
from db.detector import DetectorSettings

CLASSES = {"protocol v3 repeats": ("results/h200/repeats_v3_full/rep_*.json.gz",),
           "placements": ("results/h200/placements/pl_*.json.gz",),
           "plain": ("results/h200/plain_noise/night_*.json.gz",)}
TWO_LEVEL_RUNS = ("results/h200/repeats/rep_*.json.gz", "results/h200/repeats_v2/rep_*.json.gz",
                  *(p for g in CLASSES.values() for p in g))
GRID = {"min_rel": (0.025, 0.03, 0.035), "min_ref": (10, 15, 20), "floor_margin": (0.0, 0.1, 0.2)}
PREVIOUS = DetectorSettings(min_rel=0.03, kappa=1.0, min_ref=15, floor_margin=0.0)  # chosen before
MAX_FALSE_ALARMS = 0.5  # per 1000 series-nights on the tuning half: half the target, a margin


def _files(patterns) -> list[str]:
    return sorted({f for p in patterns for f in glob.glob(p)})


def class_series(min_runs: int = 10) -> dict[str, list[dict]]:
    """The series of each noise class of the benchmark (one night per real run)."""
    out = {name: run_series(_files(globs), min_runs) for name, globs in CLASSES.items()}
    out["two-level"] = [s for s in run_series(_files(TWO_LEVEL_RUNS), min_runs) if two_levels(s["run_values"])]
    return out


def tuning_series(min_runs: int = 10) -> list[dict]:
    """The tuning half of every class's series, each series once."""
    seen, out = set(), []
    for series in class_series(min_runs).values():
        for s in series:
            if split_half(s) == "tune" and (s["series"], s["protocol"]) not in seen:
                seen.add((s["series"], s["protocol"]))
                out.append(s)
    return out


def _score(args) -> dict:
    series, cvs, det, reps = args
    fa = clean = noisy_fa = found = cases = 0
    for ser, cv in zip(series, cvs):
        n = reps * 5 if len(ser["run_values"]) >= 60 else reps  # as the benchmark: 20 replays of the long plain series
        r = evaluate([ser], steps=(0.05,), reps=n, det=det, baselines=False)[SHIPPED]
        fa += r["false_alarms"]
        clean += r["clean_series_nights"]
        noisy_fa += r["false_alarms"] - r["false_alarms_on_series_not_called_too_noisy"]
        if cv <= QUIET:
            e = r["steps"]["0.05"]
            found += round(e["recall_within_2_nights"] * e["cases"])
            cases += e["cases"]
    return {"settings": asdict(det), "false_alarms": fa, "clean_series_nights": clean,
            "false_alarms_per_1000": 1000 * fa / max(clean, 1), "false_alarms_on_too_noisy": noisy_fa,
            "quiet_5pct_cases": cases, "quiet_5pct_recall_within_2_nights": found / max(cases, 1)}


def choose(rows: list[dict]) -> dict | None:
    """The rule: false alarms <= MAX_FALSE_ALARMS per 1000 and none on a series called too noisy; then
    the highest 5% recall on quiet series; within 0.5 points of it, the fewest false alarms, then the
    min_rel and min_ref closest to PREVIOUS (relative distance); of those, the smallest floor margin
    whose quiet recall is the best of its min_rel and min_ref at those false alarms (the floor applies
    as widely as it can without costing recall)."""
    ok = [r for r in rows if r["false_alarms_per_1000"] <= MAX_FALSE_ALARMS and r["false_alarms_on_too_noisy"] == 0]
    if not ok:
        return None
    best = max(r["quiet_5pct_recall_within_2_nights"] for r in ok)
    near = [r for r in ok if r["quiet_5pct_recall_within_2_nights"] >= best - 0.005]
    prev = asdict(PREVIOUS)
    pick = min(near, key=lambda r: (r["false_alarms"], sum(abs(r["settings"][f] / prev[f] - 1)
                                                           for f in ("min_rel", "min_ref"))))
    same = [r for r in ok if r["false_alarms"] == pick["false_alarms"]
            and all(r["settings"][f] == pick["settings"][f] for f in ("min_rel", "min_ref"))]
    top = max(r["quiet_5pct_recall_within_2_nights"] for r in same)
    return min((r for r in same if r["quiet_5pct_recall_within_2_nights"] == top),
               key=lambda r: r["settings"]["floor_margin"])


def tune(reps: int = 4, processes: int = 2) -> dict:
    """Score every grid point on the tuning classes; the chosen settings and all rows."""
    series = tuning_series()
    cvs = [n["night_cv"] for n in night_noise(series, 10)]
    grid = [replace(DetectorSettings(), **dict(zip(GRID, v))) for v in itertools.product(*GRID.values())]
    with Pool(processes) as pool:
        rows = pool.map(_score, [(series, cvs, det, reps) for det in grid])
    return {"tuning": "the 'tune' half (ci.detect_series.split_half) of the series of: " + ", ".join(
                [*CLASSES, "two-level"]), "series": len(series), "reps": reps, "grid": GRID,
            "rule": choose.__doc__, "chosen": choose(rows), "rows": rows,
            "quiet_series": sum(c <= QUIET for c in cvs)}


def register(app: typer.Typer) -> None:
    def detect_tune_cmd(out: Path = typer.Option(Path("docs/data/detector_tuning.json"), "--out"),
                        reps: int = typer.Option(4, "--reps"), processes: int = typer.Option(2, "--processes")) -> None:
        """Choose the detector's settings on the tuning half of the benchmark's series only."""
        doc = tune(reps, processes)
        out.write_text(json.dumps(doc, indent=1))
        c = doc["chosen"]
        if c is None:
            raise typer.Exit(f"no grid point meets the rule; all rows in {out}")
        print(f"chosen on {doc['series']} tuning series: {c['settings']}; quiet 5% recall "
              f"{c['quiet_5pct_recall_within_2_nights']:.1%} of {c['quiet_5pct_cases']}, "
              f"{c['false_alarms']} false alarms in {c['clean_series_nights']} series-nights")

    app.command("detect-tune")(detect_tune_cmd)
