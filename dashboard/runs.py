"""Runs page logic: the run table narrowed by tier and hardware, and each run's wall time against the
nightly tier's budget on one GPU."""
from __future__ import annotations

from typing import Iterable, Optional

import pandas as pd
import plotly.graph_objects as go

from dashboard import plots
from suite.spec import NIGHTLY_BUDGET_S

BUDGET_MIN = NIGHTLY_BUDGET_S / 60.0


def narrow(runs: pd.DataFrame, tiers: Iterable[str], hardware_keys: Iterable[str]) -> pd.DataFrame:
    """The runs of these tiers on this hardware (empty: all), newest first."""
    tiers, hardware_keys = list(tiers), list(hardware_keys)
    keep = pd.Series(True, index=runs.index)
    if tiers:
        keep &= runs["tier"].isin(tiers)
    if hardware_keys:
        keep &= runs["hardware_key"].isin(hardware_keys)
    return runs[keep].sort_values("started_at", ascending=False)


def over_budget(runs: pd.DataFrame) -> pd.DataFrame:
    """Nightly runs on a GPU whose wall time exceeded the nightly budget."""
    gpu_nightly = (runs["tier"] == "nightly") & (runs["device"] == "cuda")
    return runs[gpu_nightly & (runs["minutes"] > BUDGET_MIN)]


def previous(runs: pd.DataFrame, run_id: str) -> Optional[str]:
    """The run before `run_id` of the same tier on the same hardware, in `runs` (None: it is the first)."""
    when = pd.to_datetime(runs["started_at"], utc=True)
    mine = runs["run_id"] == run_id
    row = runs[mine].iloc[0]
    same = (runs["tier"] == row["tier"]) & (runs["hardware_key"] == row["hardware_key"]) & (when < when[mine].iloc[0])
    return None if not same.any() else runs.loc[when[same].idxmax(), "run_id"]


def duration_chart(runs: pd.DataFrame) -> go.Figure:
    """Wall minutes of each run over time, one colour per tier and hardware, filled for runner runs of a
    whole tier and hollow for the rest (narrowed to some techniques, or written outside the runner); the
    nightly budget as a dashed line when a nightly GPU run is shown."""
    fig = go.Figure()
    timed = runs.dropna(subset=["minutes"])
    for i, ((tier, hw), g) in enumerate(timed.groupby(["tier", "hardware"], sort=True)):
        g = g.sort_values("started_at")
        commits = [c[:7] if isinstance(c, str) and c else "no commit" for c in g["git_commit"]]
        whole = (g["selection"] == "whole tier").to_numpy()
        fig.add_trace(go.Scatter(
            x=g["started_at"], y=g["minutes"], mode="markers", name=f"{tier} · {hw}",
            marker=dict(color=plots.PALETTE[i % len(plots.PALETTE)], size=9, line=dict(width=2),
                        symbol=["circle" if w else "circle-open" for w in whole]),
            customdata=list(zip(commits, g["run_id"].str[:12], g["n_results"], g["failed_correctness"] + g["error"],
                                g["selection"])),
            hovertemplate="%{x|%Y-%m-%d %H:%M} · %{y:.1f} min · %{customdata[4]}<br>commit %{customdata[0]} · "
                          "run %{customdata[1]}<br>%{customdata[2]} results, %{customdata[3]} failed"
                          "<extra>%{fullData.name}</extra>"))
    if ((timed["tier"] == "nightly") & (timed["device"] == "cuda")).any():
        fig.add_hline(y=BUDGET_MIN, line_dash="dash", line_color="#dc2626",
                      annotation_text=f"nightly budget on one GPU: {BUDGET_MIN:.0f} min",
                      annotation_position="top left")
    fig.update_layout(height=380, yaxis_title="wall time (min)", xaxis_title="run started",
                      legend=dict(orientation="h", y=-0.25), margin=dict(t=20, b=40))
    return plots.inert(fig)
