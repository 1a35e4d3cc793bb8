"""Benchmark of the change-point detector that ships (db.detector) on replayed real noise with injected steps.

Noise from repeated whole runs (`--runs`): each night's value is one of a series' real whole-run
medians, drawn independently. Otherwise from the raw timing samples of committed H200 result files,
in their recorded order: a "night" is the median of `block` consecutive samples, and a history of
`nights` nights replays consecutive blocks from a random offset (wrapping around). Steps of
+2%..+20% are injected at a random night; the detectors run online (one night at a time). Reported
per detector and step size: recall within 2 nights, recall by the end, median delay, and false
alarms per 1000 series-nights (alerts on step-free nights: whole histories without a step and the
nights before a step). For the shipped detector also: false alarms on a series that the too-noisy
warning (db.noise.resolution, from the same nights) did not name that night, and the 5% recall on
series the warning did not name before the step. `public_path` replays nights through `kwatch nightly`.
"""
from __future__ import annotations

import glob
import json
import time
from dataclasses import asdict
from pathlib import Path
from typing import Optional

from multiprocessing import Pool

import numpy as np
import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from ci.detect_core import PeltSettings, online_pelt, threshold_alert, zscore_alert
from ci.detect_short import evaluate_short
from ci.detect_short import to_markdown as short_markdown
from ci.detect_series import noise_series, result_docs, run_series, split_half, technique_runs, two_levels
from ci.nightly_replay import public_path, replay_series
from db.detector import DetectorSettings, online_changes
from db.noise import night_cv, resolution
from runners.env import HARDWARE_KEYS, SOFTWARE_KEYS, key_of

SHIPPED = "shipped: online rank rule (db.detector)"


def _online_simple(values: np.ndarray, rule, warmup: int) -> list[int]:
    return [n for n in range(warmup, len(values)) if rule(list(values[:n]), float(values[n]))]


def evaluate(series: list[dict], steps=(0.02, 0.05, 0.10, 0.20), reps: int = 20, nights: int = 60,
             block: int = 10, warmup: int = 10, scale: float = 1.0, seed: int = 0,
             pelt: PeltSettings = PeltSettings(), det: DetectorSettings = DetectorSettings(),
             baselines: bool = True) -> dict:
    """Run the detectors on null and stepped replays; returns the figures per detector (baselines: also
    PELT, the z-score and the fixed threshold, else the shipped detector alone)."""
    rng = np.random.default_rng(seed)
    detectors = {
        SHIPPED: lambda v: [a.night for a in online_changes(list(v), det, start=warmup)],
        "previous: PELT (ruptures), last 20 nights": lambda v: [n for n, _ in online_pelt(list(v), pelt, start=warmup)],
        "conbench z-score (abs z > 5, lookback 20)": lambda v: _online_simple(v, zscore_alert, warmup),
        "fixed 5% vs median of last 5": lambda v: _online_simple(v, threshold_alert, warmup),
    }
    if not baselines:
        detectors = {SHIPPED: detectors[SHIPPED]}
    stats = {d: {"false_alarms": 0, "clean_nights": 0, "unflagged_false_alarms": 0,
                 "steps": {str(s): {"n": 0, "found2": 0, "found": 0, "delays": [], "n_ok": 0, "found2_ok": 0}
                           for s in steps}} for d in detectors}
    for ser in series:
        for _ in range(reps):
            base = replay_series(ser, nights, block, rng, scale)
            cases = [(None, base)]
            for st in steps:
                at = int(rng.integers(warmup + 10, nights - 10))
                v = base.copy()
                v[at:] *= 1.0 + st
                cases.append(((st, at), v))
            for name, detector in detectors.items():
                d = stats[name]
                for step, v in cases:
                    alerts = detector(v)
                    first_clean = warmup
                    end = nights if step is None else step[1]
                    false = [n for n in alerts if first_clean <= n < end]
                    d["false_alarms"] += len(false)
                    d["clean_nights"] += end - first_clean
                    if name == SHIPPED:  # the warning as the nightly report shows it on that night
                        d["unflagged_false_alarms"] += sum(not resolution(list(v[:n + 1]), det)["too_noisy"]
                                                           for n in false)
                    if step is None:
                        continue
                    st, at = step
                    after = [n - at for n in alerts if n >= at]
                    e = d["steps"][str(st)]
                    e["n"] += 1
                    if after:
                        e["found"] += 1
                        e["delays"].append(after[0])
                        e["found2"] += after[0] <= 2
                    if name == SHIPPED and not resolution(list(v[:at]), det)["too_noisy"]:
                        e["n_ok"] += 1
                        e["found2_ok"] += bool(after) and after[0] <= 2
    out = {}
    for name, d in stats.items():
        out[name] = {"false_alarms_per_1000_series_nights": 1000 * d["false_alarms"] / max(d["clean_nights"], 1),
                     "false_alarms": d["false_alarms"], "clean_series_nights": d["clean_nights"],
                     "steps": {s: {"cases": e["n"], "recall_within_2_nights": e["found2"] / max(e["n"], 1),
                                   "recall_by_end": e["found"] / max(e["n"], 1),
                                   "median_delay_nights": float(np.median(e["delays"])) if e["delays"] else None,
                                   "mean_delay_nights": float(np.mean(e["delays"])) if e["delays"] else None}
                               for s, e in d["steps"].items()}}
        if name == SHIPPED:
            out[name]["false_alarms_on_series_not_called_too_noisy"] = d["unflagged_false_alarms"]
            for s_, e in d["steps"].items():
                out[name]["steps"][s_].update(cases_not_called_too_noisy=e["n_ok"],
                                              found2_not_called_too_noisy=e["found2_ok"])
    return out


def _mad_cv(values) -> float:
    """The median-based spread used before (1.4826 x MAD / median): blind to a minority level."""
    x = np.asarray(values, dtype=float)
    med = float(np.median(x))
    return float(1.4826 * np.median(np.abs(x - med)) / med)


def night_noise(series: list[dict], block: int) -> list[dict]:
    """Per series: night CV (sd / mean), the median-based figure for contrast, the resolution from all
    its nights and whether they fall in two levels."""
    out = []
    for s in series:
        if "run_values" in s:  # one night per real run
            v = list(s["run_values"])
            row = {"series": s["series"], "file": s["file"], "protocol": s["protocol"], "samples": len(v)}
        else:
            x = np.asarray(s["samples"])
            n = len(x) // block
            v = list(np.median(x[: n * block].reshape(n, block), axis=1))
            row = {"series": s["series"], "file": s["file"], "samples": len(x)}
        r = resolution(v)
        out.append({**row, "nights": len(v), "night_cv": night_cv(v), "night_cv_mad": _mad_cv(v),
                    "resolvable_step": r["resolvable_step"], "too_noisy": r["too_noisy"], "two_levels": two_levels(v)})
    return out


def _evaluate_one(args) -> dict:
    ser, kw = args
    return evaluate([ser], **kw)


def _merge(parts: list[dict]) -> dict:
    """Pool per-series figures (sums of counts; delays pooled by case-weighted means)."""
    out = {}
    for name in parts[0]:
        fa = sum(p[name]["false_alarms"] for p in parts)
        nights = sum(p[name]["clean_series_nights"] for p in parts)
        steps = {}
        for st in parts[0][name]["steps"]:
            es = [p[name]["steps"][st] for p in parts]
            n = sum(e["cases"] for e in es)
            found = [(e["recall_by_end"] * e["cases"], e["mean_delay_nights"]) for e in es if e["mean_delay_nights"] is not None]
            nf = sum(f for f, _ in found)
            steps[st] = {"cases": n, "recall_within_2_nights": sum(e["recall_within_2_nights"] * e["cases"] for e in es) / n,
                         "recall_by_end": sum(e["recall_by_end"] * e["cases"] for e in es) / n,
                         "mean_delay_nights": sum(f * d for f, d in found) / nf if nf else None,
                         "worst_series_recall_within_2_nights": min(e["recall_within_2_nights"] for e in es)}
        out[name] = {"false_alarms_per_1000_series_nights": 1000 * fa / max(nights, 1), "false_alarms": fa,
                     "clean_series_nights": nights, "steps": steps}
        if "false_alarms_on_series_not_called_too_noisy" in parts[0][name]:
            out[name]["false_alarms_on_series_not_called_too_noisy"] = sum(
                p[name]["false_alarms_on_series_not_called_too_noisy"] for p in parts)
            for st in steps:
                n_ok = sum(p[name]["steps"][st]["cases_not_called_too_noisy"] for p in parts)
                f_ok = sum(p[name]["steps"][st]["found2_not_called_too_noisy"] for p in parts)
                steps[st].update(cases_not_called_too_noisy=n_ok, found2_not_called_too_noisy=f_ok,
                                 recall_within_2_nights_not_called_too_noisy=f_ok / n_ok if n_ok else None)
    return out


BUCKETS = ((0.0, 0.015, "night CV <= 1.5%"), (0.0, 0.005, "night CV < 0.5%"), (0.005, 0.015, "0.5% - 1.5%"),
           (0.015, 0.05, "1.5% - 5%"), (0.05, 1e9, ">= 5%"))


def between_run_drift(paths: list[str]) -> list[dict]:
    """|change| of whole-run latency medians between result files of one technique on one machine."""
    docs = result_docs(paths)
    out = []
    for i, (na, a) in enumerate(docs):
        for nb, b in docs[i + 1:]:
            ka = (key_of(a["run"]["env"], HARDWARE_KEYS), key_of(a["run"]["env"], SOFTWARE_KEYS))
            if ka != (key_of(b["run"]["env"], HARDWARE_KEYS), key_of(b["run"]["env"], SOFTWARE_KEYS)):
                continue
            va = {(r["technique"], r["impl"], r["case"], (r["stats"] or {}).get("protocol")): r["value"]
                  for r in a["results"] if r["metric"] == "latency_ms" and r["status"] == "ok"}
            for r in b["results"]:
                k = (r["technique"], r["impl"], r["case"], (r["stats"] or {}).get("protocol"))
                if r["metric"] == "latency_ms" and r["status"] == "ok" and k in va and va[k]:
                    out.append({"files": [na, nb], "series": "/".join(k[:3]), "rel_change": r["value"] / va[k] - 1})
    return out


def drift_summary(pairs: list[dict]) -> dict:
    """|change| of a series' whole-run median between two runs: count, median, 90th percentile, max."""
    a = np.abs([p["rel_change"] for p in pairs]) if pairs else np.zeros(1)
    return {"pairs": len(pairs), "median_abs_change": float(np.median(a)),
            "p90_abs_change": float(np.percentile(a, 90)), "max_abs_change": float(a.max())}


def run_benchmark(paths: list[str] | None = None, reps: int = 4, scales=(1.0, 3.0), block: int = 10,
                  seed: int = 0, pelt: PeltSettings = PeltSettings(), processes: int = 2,
                  runs: list[str] | None = None, min_runs: int = 8, newest_protocol: bool = False,
                  progress=None, det: DetectorSettings = DetectorSettings(), only_two_levels: bool = False,
                  split: str | None = None) -> dict:
    """The whole benchmark: all series, and by noise bucket (series in parallel). Noise from the
    committed H200 files' within-run samples, or with `runs` from repeated whole runs (one night each).
    progress(done, total, label) is called as each series is done at each noise scale.
    only_two_levels: keep the series whose nights fall in two levels (two_levels).
    split: keep only the series of that half ("tune" or "test", split_half)."""
    if runs:
        paths = sorted(runs)
        series = run_series(paths, min_runs, newest_protocol)
        if not series:
            raise ValueError(f"no latency series appears in {min_runs} or more of the {len(paths)} run files")
        source = f"repeated runs: each night drawn from one of a series' {min_runs}+ real whole-run medians"
        if newest_protocol:
            source += " (each kernel and case under the newest protocol it was timed with)"
    else:
        paths = paths or technique_runs()
        series = noise_series(paths, min_samples=block * 20)
        source = f"within-run samples: each night the median of {block} consecutive samples"
    if only_two_levels:
        series = [x for x, n in zip(series, night_noise(series, block)) if n["two_levels"]]
        if not series:
            raise ValueError("no series of these files falls in two levels")
        source += "; only series whose nights fall in two levels (a gap of 2%+ with 2+ nights each side)"
    if split:
        series = [x for x in series if split_half(x) == split]
        if not series:
            raise ValueError(f"no series of these files is in the {split!r} half")
        source += f"; only the {split!r} half of the series (split_half)"
    noise = night_noise(series, block)
    t0 = time.time()
    doc = {"method": __doc__.strip(), "noise_source": source, "detector_settings": asdict(det),
           "pelt_settings": asdict(pelt), "block": block, "split": split,
           "reps": reps, "nights": 60, "files": [f"{Path(p).parent.name}/{Path(p).name}" for p in paths], "series": noise,
           "between_run_drift": drift_summary(between_run_drift(paths)), "by_noise_scale": {}}
    with Pool(processes) as pool:
        for k, sc in enumerate(scales):
            kw = {"reps": reps, "block": block, "scale": sc, "seed": seed, "pelt": pelt, "det": det}
            parts = []
            for part in pool.imap(_evaluate_one, [(s, kw) for s in series]):  # in order, as they finish
                parts.append(part)
                if progress:
                    progress(k * len(series) + len(parts), len(series) * len(scales), f"noise x{sc:g}")
            entry = {"all series": _merge(parts)}
            for lo, hi, name in BUCKETS:
                sel = [p for p, n in zip(parts, noise) if lo <= n["night_cv"] * sc <= hi]
                if sel:
                    entry[name] = {"series": len(sel), **_merge(sel)}
            doc["by_noise_scale"][str(sc)] = entry
    if runs:  # a new series, database or software change: 5-15 nights of history before the step
        doc["short_histories"] = evaluate_short(series, reps=reps, seed=seed, det=det)
    doc["seconds"] = round(time.time() - t0, 1)
    return doc


def to_markdown(doc: dict) -> str:
    """The benchmark's tables for docs/detector_benchmark.md."""
    lines = [f"Noise: {doc['noise_source']}.", ""] if doc.get("noise_source") else []
    for sc, entry in doc["by_noise_scale"].items():
        for bucket, res in entry.items():
            n = res.get("series", len(doc["series"])) if isinstance(res, dict) else 0
            lines += [f"### noise x{float(sc):g}, {bucket} ({n} series)", "",
                      "| detector | false alarms / 1000 series-nights | " +
                      " | ".join(f"{float(s):.0%} step: found <= 2 nights (by end), mean delay" for s in
                                 next(v for k, v in res.items() if k != "series")["steps"]) + " |",
                      "|---|---|" + "---|" * 4]
            for det, v in res.items():
                if det == "series":
                    continue
                cells = [f"{e['recall_within_2_nights']:.1%} ({e['recall_by_end']:.1%}), "
                         f"{'—' if e['mean_delay_nights'] is None else format(e['mean_delay_nights'], '.2f')}"
                         for e in v["steps"].values()]
                lines.append(f"| {det} | {v['false_alarms_per_1000_series_nights']:.2f} "
                             f"({v['false_alarms']} in {v['clean_series_nights']}) | " + " | ".join(cells) + " |")
            shipped = res.get(SHIPPED, {})
            five = shipped.get("steps", {}).get("0.05", {})
            if "false_alarms_on_series_not_called_too_noisy" in shipped and five.get("cases_not_called_too_noisy"):
                lines += ["", f"Shipped detector: {shipped['false_alarms_on_series_not_called_too_noisy']} false alarms "
                          "on a series the too-noisy warning did not name that night; 5% step found <= 2 nights in "
                          f"{five['recall_within_2_nights_not_called_too_noisy']:.1%} of the "
                          f"{five['cases_not_called_too_noisy']} cases on a series not called too noisy before the step."]
            lines.append("")
    if doc.get("short_histories"):
        lines += ["### Short histories (ci/detect_short.py)", "",
                  *short_markdown(doc["short_histories"], "short histories"), ""]
    if doc.get("public_path"):
        pp = doc["public_path"]
        lines += ["### Through `kwatch nightly` (one result file per night)", "",
                  f"{pp['histories']} histories of {pp['nights']} nights, {pp['series_nights']} series-nights: "
                  f"{pp['false_alarms']} false alarms, nights failed on a step-free series "
                  f"({pp['false_alarms_per_1000_series_nights']:.2f} / 1000; "
                  f"{pp.get('false_alarms_by_the_gate_against_the_previous_night', '?')} by the gate against the "
                  f"previous night; {pp.get('false_alarms_on_series_the_report_did_not_call_too_noisy', '?')} on a "
                  "series that night's report did not call too noisy), "
                  f"{pp['found_within_2_nights']} of {pp['steps']} {pp['step']:.0%} steps failing a night within 2 "
                  f"nights; the detector's alerts identical to the internal function's: {pp['same_as_internal']}.", ""]
    return "\n".join(lines)


def register(app: typer.Typer) -> None:
    def detect_bench_cmd(out: Path = typer.Option(Path("docs/data/detector_benchmark.json"), "--out"),
                         md: Optional[Path] = typer.Option(None, "--markdown", help="also write the tables here"),
                         reps: int = typer.Option(4, "--reps"), processes: int = typer.Option(2, "--processes"),
                         runs: Optional[list[str]] = typer.Option(None, "--runs", help="glob of repeated whole-run "
                                                                  "result files: replay their real run-to-run noise "
                                                                  "(repeatable; a file matched twice counts once)"),
                         min_runs: int = typer.Option(8, "--min-runs", help="with --runs: series in fewer files are left out"),
                         scales: str = typer.Option("1,3", "--scales", help="noise multipliers to evaluate"),
                         newest_protocol: bool = typer.Option(False, "--newest-protocol", help="with --runs: of a "
                                                              "kernel and case timed under several protocol "
                                                              "versions, replay only the newest"),
                         two_level: bool = typer.Option(False, "--two-levels", help="keep only series whose "
                                                        "nights fall in two levels"),
                         public: int = typer.Option(0, "--public-histories", help="also replay this many "
                                                    "histories through kwatch nightly, one result file per night"),
                         public_nights: int = typer.Option(40, "--public-nights"),
                         split: Optional[str] = typer.Option(None, "--split", help="only the series of this "
                                                             "half: 'test' (held out from kwatch detect-tune) "
                                                             "or 'tune'")) -> None:
        """Benchmark the change-point detector on replayed real noise with injected steps."""
        found: set[str] = set()
        for pattern in runs or []:
            matched = glob.glob(pattern, recursive=True)
            if not matched:
                raise typer.BadParameter(f"no files match {pattern!r}", param_hint="--runs")
            found.update(matched)
        files = sorted(found) if runs else None
        if split not in (None, "tune", "test"):
            raise typer.BadParameter("'tune' or 'test'", param_hint="--split")
        with Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                      console=Console(stderr=True)) as bar:
            task = bar.add_task("reading runs", total=None)
            try:
                doc = run_benchmark(reps=reps, processes=processes, runs=files, min_runs=min_runs,
                                    scales=tuple(float(x) for x in scales.split(",")), newest_protocol=newest_protocol,
                                    only_two_levels=two_level, split=split,
                                    progress=lambda d, t, label: bar.update(task, completed=d, total=t,
                                                                            description=f"series, {label}"))
            except ValueError as exc:
                raise typer.BadParameter(str(exc), param_hint="--runs") from exc
            if public:
                bar.update(task, description="histories through kwatch nightly", completed=0, total=None)
                series = run_series(files, min_runs, newest_protocol) if files else []
                if two_level:
                    series = [x for x in series if two_levels(x["run_values"])]
                if split:
                    series = [x for x in series if split_half(x) == split]
                doc["public_path"] = public_path(series, public, public_nights)
        out.write_text(json.dumps(doc, indent=1))
        if md:
            md.write_text(to_markdown(doc))
        print(to_markdown(doc))

    app.command("detect-bench")(detect_bench_cmd)
