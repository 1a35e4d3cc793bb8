"""Shared Plotly figures: a result's spread, status bars, heat maps with a claimed box (Trends: trend_chart)."""
from __future__ import annotations

import math
from typing import Optional

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from db.escape import plotly_text

STATUS_COLORS = {"failed correctness": "#450a0a", "errored": "#7f1d1d", "regressed": "#dc2626",
                 "improved": "#16a34a", "regressed (host timer, not gated)": "#fca5a5",
                 "improved (host timer, not gated)": "#86efac", "stable": "#94a3b8", "expected failure": "#93c5fd",
                 "insufficient data": "#e2e8f0", "missing baseline": "#cbd5e1",
                 "first run on this GPU": "#e0e7ff", "first run on this machine": "#e0e7ff"}
# Okabe-Ito's colour-blind-safe eight, then Plotly's D3 eight: the first colours are far apart in hue
# (Streamlit's own theme starts with two blues).
PALETTE = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000", "#F0E442",
           "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"]
TRACE_TEXT = ("name", "text", "hovertext", "customdata", "x", "y")


def _inert(v):
    """v with every string in it (also in lists and object arrays) escaped for Plotly."""
    if isinstance(v, str):
        return plotly_text(v, limit=10_000)
    if isinstance(v, np.ndarray) and v.dtype == object or isinstance(v, (list, tuple)):
        return np.vectorize(_inert, otypes=[object])(np.asarray(v, dtype=object)) if len(v) else v
    return v


def inert(fig: go.Figure) -> go.Figure:
    """fig with the names and labels in it (techniques, cases, GPUs, who acknowledged) escaped: Plotly
    reads <a href>, <b>, ... in names, hovers, ticks and annotations. Templates are ours and stay."""
    for trace in fig.data:
        for attr in TRACE_TEXT:
            if attr in trace and trace[attr] is not None:
                trace[attr] = _inert(trace[attr])
    for ann in fig.layout.annotations or ():
        ann.text = _inert(ann.text)
    for axis in (fig.layout.xaxis, fig.layout.yaxis):
        if axis.ticktext is not None:
            axis.ticktext = _inert(list(axis.ticktext))
    if fig.layout.title.text:
        fig.layout.title.text = _inert(fig.layout.title.text)
    return fig


def spread(samples, value) -> tuple[float, float, float, int]:
    """(median, 10th percentile, 90th percentile, n) of a result's samples, else of its value."""
    xs = [float(s) for s in (samples or []) if s is not None and not math.isnan(float(s))]
    if not xs:
        v = float(value) if value is not None and not pd.isna(value) else math.nan
        return v, v, v, 0
    a = np.asarray(xs)
    return float(np.median(a)), float(np.percentile(a, 10)), float(np.percentile(a, 90)), len(a)


def with_spread(points: pd.DataFrame) -> pd.DataFrame:
    """points + median/p10/p90/n columns (from samples) and a short commit."""
    stats = [spread(s, v) for s, v in zip(points["samples"], points["value"])]
    out = points.assign(median=[s[0] for s in stats], p10=[s[1] for s in stats], p90=[s[2] for s in stats],
                        n=[s[3] for s in stats])
    out["commit"] = [c[:7] if isinstance(c, str) and c else "none" for c in out["git_commit"]]
    return out


def log_axis(fig: go.Figure, values, axis: str = "x") -> go.Figure:
    """A log axis ticked at the data's own values ('512', '4096'), not Plotly's minor digits ('2 3 4 5')."""
    vals = sorted({float(v) for v in values if v is not None and not pd.isna(v) and float(v) > 0})
    update = fig.update_xaxes if axis == "x" else fig.update_yaxes
    return update(type="log", tickmode="array", tickvals=vals, ticktext=[f"{v:g}" for v in vals])


def status_bars(counts: pd.DataFrame) -> go.Figure:
    """Stacked horizontal bars: one per hardware, series per status (counts: hardware x status)."""
    fig = go.Figure()
    for status, color in STATUS_COLORS.items():
        if status in counts.columns:
            fig.add_trace(go.Bar(y=counts.index, x=counts[status], name=status, orientation="h",
                                 marker_color=color))
    fig.update_layout(barmode="stack", height=190 + 40 * len(counts), margin=dict(t=30, b=30),
                      xaxis_title="series", legend=dict(orientation="h", yanchor="top", y=-0.45))
    return fig


def _position(values: list[float], v: float) -> float:
    """Index position of value v on an axis whose cells sit at sorted `values` (interpolated)."""
    xs = np.asarray(values, dtype=float)
    return float(np.interp(v, xs, np.arange(len(xs))))


def sweep_cells(rows: pd.DataFrame, y: str, x: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(values, marks) over the sorted values of columns y (index) and x (columns) of rows (status, value):
    values = the largest value of the cell's ok rows (NaN where none), marks = True exactly on the cells
    that hold a non-ok row and no ok one (no finite output), False everywhere else."""
    ys, xs = sorted(set(rows[y])), sorted(set(rows[x]))
    ok = rows[rows["status"] == "ok"]
    values = ok.pivot_table(index=y, columns=x, values="value", aggfunc="max").reindex(index=ys, columns=xs)
    has_ok = set(zip(ok[y], ok[x]))
    bad = {(a, b) for a, b, s in zip(rows[y], rows[x], rows["status"]) if s != "ok"} - has_ok
    marks = pd.DataFrame([[(a, b) in bad for b in xs] for a in ys], index=ys, columns=xs, dtype=bool)
    return values, marks


def heatmap(grid: pd.DataFrame, title: str, x_title: str, y_title: str, z_title: str,
            box: Optional[tuple[float, float]] = None, log_z: bool = True,
            marks: Optional[pd.DataFrame] = None, zrange: Optional[tuple[float, float]] = None) -> go.Figure:
    """A heat map of grid (index = y values, columns = x values, both sorted numbers), one equal cell
    per grid point; `box` = (lo, hi) drawn on both axes as a dashed rectangle around the cells within;
    `marks` (same shape, bool) puts an x on cells that failed (no finite value)."""
    z = grid.to_numpy(dtype=float)
    shown = np.log10(np.where(z > 0, z, np.nan)) if log_z else z
    xs, ys = list(grid.columns), list(grid.index)
    fmt = lambda v: f"{v:g}" if isinstance(v, (int, float)) else str(v)  # noqa: E731
    text = np.vectorize(lambda v: "" if np.isnan(v) else f"{v:.3g}")(z)
    fig = go.Figure(go.Heatmap(
        x=list(range(len(xs))), y=list(range(len(ys))), z=shown, text=text, colorscale="Viridis",
        zmin=zrange[0] if zrange else None, zmax=zrange[1] if zrange else None,
        colorbar=dict(title=("log10 " if log_z else "") + z_title),
        customdata=np.array([[f"{x_title} {fmt(x)}, {y_title} {fmt(y)}" for x in xs] for y in ys]),
        hovertemplate=f"%{{customdata}}<br>{z_title} %{{text}}<extra></extra>"))
    # A pivot leaves NaN in cells it did not see; NaN is truthy, so fill it before reading booleans.
    marked = (marks.reindex(index=ys, columns=xs).fillna(False).astype(bool).to_numpy()
              if marks is not None else np.zeros((0, 0), dtype=bool))
    if marked.any():
        yy, xx = np.nonzero(marked)
        fig.add_trace(go.Scatter(x=xx, y=yy, mode="markers", name="non-finite / failed",
                                 marker=dict(symbol="x", color="#dc2626", size=9), showlegend=True))
    if box is not None:
        lo, hi = box
        x0, x1 = _position(xs, lo) - 0.5, _position(xs, hi) + 0.5
        y0, y1 = _position(ys, lo) - 0.5, _position(ys, hi) + 0.5
        fig.add_shape(type="rect", x0=x0, x1=x1, y0=y0, y1=y1, line=dict(color="#f97316", width=3, dash="dash"))
        fig.add_annotation(x=x1, y=y1, text=f"claimed range [{lo}, {hi}]", showarrow=False,
                           xanchor="right", yanchor="bottom", font=dict(color="#f97316"))
    fig.update_xaxes(tickmode="array", tickvals=list(range(len(xs))), ticktext=[fmt(x) for x in xs])
    fig.update_yaxes(tickmode="array", tickvals=list(range(len(ys))), ticktext=[fmt(y) for y in ys])
    fig.update_layout(title=title, xaxis_title=x_title, yaxis_title=y_title, height=440,
                      margin=dict(t=50, b=30), legend=dict(orientation="h", y=-0.2))
    return fig
