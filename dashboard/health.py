"""Health: per hardware, the latest run of a tier against the previous run of that tier and hardware."""
from __future__ import annotations

import pandas as pd

from dashboard import data, verdict


def latest_pairs(runs: pd.DataFrame, tier: str) -> list[tuple[str, pd.Series, pd.Series | None]]:
    """[(hardware, latest run, previous run or None)] for runs of `tier`, one per hardware key."""
    out = []
    tiered = runs[runs["tier"] == tier].sort_values("started_at", ascending=False)
    for _key, g in tiered.groupby("hardware_key", sort=False):
        latest = g.iloc[0]
        prev = g.iloc[1] if len(g) > 1 else None
        out.append((latest["hardware"], latest, prev))
    return sorted(out, key=lambda t: t[0])


def health(url: str, runs: pd.DataFrame, tier: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(counts per hardware x status, every compared series with its hardware), worst first."""
    frames = []
    for hardware, latest, prev in latest_pairs(runs, tier):
        cand = data.run_results(url, latest["run_id"])
        base = data.run_results(url, prev["run_id"]) if prev is not None else cand.iloc[0:0]
        cmp = verdict.compare(base, cand)
        frames.append(cmp.assign(hardware=hardware, hardware_key=latest["hardware_key"],
                                 run_id=latest["run_id"],
                                 baseline_run=prev["run_id"] if prev is not None else None))
    if not frames:
        return pd.DataFrame(columns=verdict.ORDER), pd.DataFrame(columns=verdict.COLUMNS + ["hardware"])
    series = pd.concat(frames, ignore_index=True)
    counts = (series.groupby(["hardware", "status"]).size().unstack(fill_value=0)
              .reindex(columns=verdict.ORDER, fill_value=0))
    return counts, verdict.sort_worst_first(series)
