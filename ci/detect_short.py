"""The detector benchmark's short histories: a new series, a new database or a software change leaves the
detector only the nights since then. Replayed from real whole-run noise (ci.detect_series.run_series):

- short: a history of 5-15 nights, then a step (a new series or database, night 0 its first night);
- software: 10-25 nights, then a software change (the series restarts: its identity holds the software,
  and its level moves by up to +-10 %), then 5-14 nights of the new software and a step.

Per step size: found within 2 nights (alerted on the step's 3rd night or before), found by the end (40
nights after the step), and false alarms per 1000 step-free series-nights (step-free histories and the
nights before a step, from each history's first night on)."""
from __future__ import annotations

import numpy as np

from db.detector import DetectorSettings, online_changes
from db.noise import night_cv

QUIET = 0.015


def _alerts_after(v: np.ndarray, start: int, det: DetectorSettings) -> list[int]:
    """Nights (of v) of the alerts the detector raises on v[start:], which it sees as a series of its own."""
    return [start + a.night for a in online_changes(list(v[start:]), det)]


def evaluate_short(series: list[dict], steps=(0.05, 0.20), reps: int = 20, seed: int = 0,
                   det: DetectorSettings = DetectorSettings(), after: int = 40) -> dict:
    """Figures per scenario (short, software) and step, for all series and for quiet ones (night CV <= 1.5 %)."""
    rng = np.random.default_rng(seed)
    out: dict = {}
    for ser in series:
        x = np.asarray(ser["run_values"], dtype=float)
        quiet = night_cv(list(x)) <= QUIET
        for _ in range(reps):
            for scen in ("short", "software"):
                pre = int(rng.integers(5, 16)) if scen == "short" else int(rng.integers(5, 15))
                restart = 0 if scen == "short" else int(rng.integers(10, 26))
                n = restart + pre + after
                base = rng.choice(x, n)
                if restart:
                    base[restart:] *= 1 + rng.uniform(-0.10, 0.10)  # the software change moves the level
                for st in (None, *steps):
                    v = base.copy()
                    at = restart + pre
                    if st is not None:
                        v[at:] *= 1 + st
                    # before a software change the old series, from it a new one
                    alerts = (_alerts_after(v[:restart], 0, det) if restart else []) + _alerts_after(v, restart, det)
                    end = n if st is None else at
                    for group in ("all", "quiet") if quiet else ("all",):
                        e = out.setdefault(scen, {}).setdefault(group, {"false_alarms": 0, "clean_nights": 0,
                                                                       "steps": {}})
                        e["false_alarms"] += sum(1 for a in alerts if a < end)
                        e["clean_nights"] += end
                        if st is None:
                            continue
                        s = e["steps"].setdefault(f"{st:g}", {"cases": 0, "found2": 0, "found": 0})
                        first = [a - at for a in alerts if a >= at]
                        s["cases"] += 1
                        s["found"] += bool(first)
                        s["found2"] += bool(first) and first[0] <= 2
    for scen in out.values():
        for e in scen.values():
            e["false_alarms_per_1000_series_nights"] = 1000 * e["false_alarms"] / max(e["clean_nights"], 1)
            for s in e["steps"].values():
                s["recall_within_2_nights"] = s["found2"] / s["cases"]
                s["recall_by_end"] = s["found"] / s["cases"]
    return out


def to_markdown(doc: dict, label: str) -> list[str]:
    """A table of evaluate_short's figures."""
    lines = [f"| {label}: scenario, series | false alarms / 1000 series-nights | "
             "5% step <= 2 nights (by end) | 20% step <= 2 nights (by end) |", "|---|---|---|---|"]
    for scen, groups in doc.items():
        for group, e in groups.items():
            cells = [f"{s['recall_within_2_nights']:.1%} ({s['recall_by_end']:.1%}) of {s['cases']}"
                     for s in e["steps"].values()]
            lines.append(f"| {scen}, {group} | {e['false_alarms_per_1000_series_nights']:.2f} "
                         f"({e['false_alarms']} in {e['clean_nights']}) | " + " | ".join(cells) + " |")
    return lines
