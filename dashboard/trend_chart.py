"""The Trends chart: one line per implementation x hardware x protocol (optionally x software or kernel
version), over run time, commit (repeats collapsed to their median and range) or run order."""
from __future__ import annotations

from typing import Optional

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from dashboard.plots import PALETTE
from db.noise import night_cv
from db.verdict import Thresholds, metric_kind
from db.verdict.rules import THROUGHPUT, TIMING
from suite.ceilings import share_text

MAX_LINES = 8
X_AXES = {"started_at": "date", "commit": "commit", "order": "run order"}
# What a line is split by, beyond implementation x hardware x protocol (two protocols are never one series).
SPLITS = {"impl · hardware": [], "impl · hardware · software": ["software"],
          "impl · hardware · kernel version": ["kernel"]}
# Older links' `group` values and the split that shows the same lines or more.
GROUP_ALIASES = {"impl version": "impl · hardware · kernel version", "hardware · software": "impl · hardware · software",
                 "software": "impl · hardware · software", "hardware": "impl · hardware", "impl": "impl · hardware"}
BASE_KEY = ["impl", "hardware", "protocol"]
BAND_LINES = 3  # reference bands are drawn for at most this many lines (more would hide the data)
REFERENCE_RUNS = 10
UNITLESS = ("", "1", "bool", "ratio", "fraction")


def axis_title(metric: str, unit: str) -> str:
    """'latency_ms (ms)'; a unitless metric by its name alone (never a bare '1')."""
    unit = str(unit or "")
    return metric if unit in UNITLESS or unit in metric else f"{metric} ({unit})"


def short_protocol(protocol: str) -> str:
    """'cuda-events+l2flush+graph/v3' -> 'graph/v3', 'cuda-events+l2read+graph/v4' -> 'graph/v4',
    'cuda-events+l2flush/v1' -> 'plain/v1': the method common to all GPU runs left out (the version says
    how the L2 was flushed: written up to v3, read from v4)."""
    short = str(protocol or "")
    for flush in ("l2flush", "l2read"):
        short = short.removeprefix(f"cuda-events+{flush}+").removeprefix(f"cuda-events+{flush}")
    return ("plain" + short if short.startswith("/") else short) or "none"


def prepare(points: pd.DataFrame, split: str = "impl · hardware") -> pd.DataFrame:
    """points (with_spread's columns) + `kernel` (impl_hash, short), `line` (the line's name), `order`
    (the run's position among all runs shown, oldest first) and `share` (of the run's ceiling, or "-")."""
    out = points.copy()
    ceilings = out["ceiling"] if "ceiling" in out else [None] * len(out)
    out["share"] = [share_text({"ceiling": c if isinstance(c, dict) else None}) for c in ceilings]
    out["kernel"] = [h[:7] if isinstance(h, str) and h else "none" for h in out["impl_hash"]]
    out["protocol"] = out["protocol"].fillna("").astype(str)
    key = BASE_KEY + SPLITS[split]
    parts = [out[c].astype(str) if c != "protocol" else out[c].map(short_protocol) for c in key]
    out["line"] = parts[0].str.cat(parts[1:], sep=" · ")
    runs = out.sort_values(["started_at", "run_id"]).drop_duplicates("run_id")["run_id"]
    out["order"] = out["run_id"].map({r: i + 1 for i, r in enumerate(runs)})
    return out


def pick_lines(pts: pd.DataFrame, cap: int = MAX_LINES) -> tuple[list[str], int]:
    """At most `cap` line names, those with the newest results first (then by name); and how many exist."""
    ok = pts[pts["status"] == "ok"]
    if ok.empty:
        return [], 0
    last = ok.groupby("line")["started_at"].max().reset_index()
    last = last.assign(neg=-last["started_at"].astype("int64")).sort_values(["neg", "line"])
    names = list(last["line"])
    return sorted(names[:cap]), len(names)


def collapse_commits(g: pd.DataFrame) -> pd.DataFrame:
    """One row per commit of one line: the median of its runs' medians, the band the lowest to highest run
    median (one run: its p10-p90), the number of runs, in order of the commit's first run."""
    rows = []
    for commit, c in g.groupby("commit", sort=False):
        c = c.sort_values("started_at")
        last = c.iloc[-1]
        many = len(c) > 1
        rows.append({"commit": commit, "median": float(np.median(c["median"])),
                     "lo": float(c["median"].min()) if many else float(last["p10"]),
                     "hi": float(c["median"].max()) if many else float(last["p90"]),
                     "runs": len(c), "n": int(c["n"].sum()), "started_at": c["started_at"].iloc[0],
                     "protocol": last["protocol"], "kernel": ", ".join(dict.fromkeys(c["kernel"])),
                     "software": last["software"], "share": last["share"],
                     "run_id": last["run_id"], "order": int(last["order"])})
    return pd.DataFrame(rows).sort_values("started_at") if rows else pd.DataFrame(
        columns=["commit", "median", "lo", "hi", "runs", "n", "started_at", "protocol", "kernel", "software",
                 "share", "run_id", "order"])


def _per_run(g: pd.DataFrame) -> pd.DataFrame:
    g = g.sort_values(["started_at", "run_id"])
    return g.assign(lo=g["p10"], hi=g["p90"], runs=1)


def label_levels(xs: list[float], width: float) -> list[int]:
    """A row per label so that labels at positions xs (any order) closer than `width` never share one."""
    last: list[float] = []
    levels = [0] * len(xs)
    for i in sorted(range(len(xs)), key=lambda i: xs[i]):
        level = next((k for k, p in enumerate(last) if xs[i] - p >= width), len(last))
        if level == len(last):
            last.append(xs[i])
        last[level] = xs[i]
        levels[i] = level
    return levels


def _when(ts) -> str:
    t = pd.Timestamp(ts)
    return (t.tz_convert("UTC").tz_localize(None) if t.tzinfo else t).strftime("%Y-%m-%d %H:%M")


def _version_marks(fig: go.Figure, g: pd.DataFrame, x: str, color: str, name: str) -> None:
    """Open diamonds where the line's kernel version or software changes, the hover naming old -> new."""
    xs, ys, texts = [], [], []
    prev = None
    for r in g.to_dict("records"):
        now = (r["kernel"], r["software"])
        if prev is not None and now != prev:
            what = []
            if now[0] != prev[0]:
                what.append(f"kernel {prev[0]} → {now[0]}")
            if now[1] != prev[1]:
                what.append(f"software {prev[1]} → {now[1]}")
            xs.append(r[x])
            ys.append(r["median"])
            texts.append("; ".join(what))
        prev = now
    if xs:
        fig.add_trace(go.Scatter(x=xs, y=ys, mode="markers", name=f"{name}: version changes", legendgroup=name,
                                 showlegend=False, hovertext=texts, hoverinfo="text",
                                 marker=dict(symbol="diamond-open", size=16, color=color, line=dict(width=2))))


def trend_figure(points: pd.DataFrame, x: str = "started_at", metric: str = "", unit: str = "",
                 lines: Optional[list[str]] = None, change_points: Optional[pd.DataFrame] = None,
                 acks: Optional[pd.DataFrame] = None, log_y: bool = False) -> go.Figure:
    """prepare()d points as one trace per line (those in `lines`, default all); x in X_AXES.
    A marker is the run's median, its bar p10-p90; on the commit axis a commit's runs collapse to their
    median with the lowest-highest run median as the bar. Change points (dashed; red regression, green
    improvement) and acknowledgements (dotted blue) at their run, their labels on rows that never overlap."""
    fig = go.Figure()
    ok = points[points["status"] == "ok"]
    names = lines if lines is not None else sorted(ok["line"].unique())
    for i, name in enumerate(names):
        g = ok[ok["line"] == name]
        if g.empty:
            continue
        g = collapse_commits(g) if x == "commit" else _per_run(g)
        color = PALETTE[i % len(PALETTE)]
        custom = np.stack([[_when(t) for t in g["started_at"]], g["commit"], g["protocol"], g["kernel"],
                           g["lo"], g["hi"], g["runs"], g["n"], g["run_id"], g["share"]], axis=-1)
        band = "run medians %{customdata[4]:.4g} – %{customdata[5]:.4g} over %{customdata[6]} runs" \
            if x == "commit" else "p10–p90 %{customdata[4]:.4g} – %{customdata[5]:.4g} · %{customdata[7]} samples"
        fig.add_trace(go.Scatter(
            x=g[x], y=g["median"], mode="lines+markers", name=name, legendgroup=name,
            line=dict(color=color), marker=dict(color=color),
            error_y=dict(type="data", symmetric=False, array=g["hi"] - g["median"],
                         arrayminus=g["median"] - g["lo"], thickness=1, color=color),
            customdata=custom,
            hovertemplate="<b>%{y:.4g} " + unit + "</b><br>%{customdata[0]} · commit %{customdata[1]}"
                          "<br>protocol %{customdata[2]} · kernel %{customdata[3]}<br>" + band +
                          "<br>share of ceiling %{customdata[9]} · run %{customdata[8]}<extra>%{fullData.name}</extra>"))
        _version_marks(fig, g, x, color, name)
    bad = points[(points["status"] != "ok") & points["line"].isin(names)]
    if not bad.empty:
        fig.add_trace(go.Scatter(x=bad[x], y=[None] * len(bad), mode="markers", name="failed / error",
                                 marker=dict(symbol="x", color="#7f1d1d")))
    if metric_kind(metric, unit) in (TIMING, THROUGHPUT) and len(names) <= BAND_LINES:
        for i, name in enumerate(names):
            _bands(fig, ok[ok["line"] == name], x, PALETTE[i % len(PALETTE)])
    _change_marks(fig, points, x, change_points, acks)
    fig.update_layout(yaxis_title=axis_title(metric, unit), xaxis_title=X_AXES.get(x, x), height=520,
                      legend=dict(orientation="h", yanchor="top", y=-0.18), margin=dict(b=30))
    if x == "commit":
        order = points.sort_values("started_at")["commit"]
        fig.update_xaxes(type="category", categoryorder="array", categoryarray=list(dict.fromkeys(order)))
    elif x == "order":
        fig.update_xaxes(tickformat="d")
    if log_y:
        fig.update_yaxes(type="log")
    return fig


def reference(g: pd.DataFrame) -> Optional[dict]:
    """A line's newest REFERENCE_RUNS run medians (oldest first in g): their median, night CV and span, and
    the gate's threshold (db.verdict.Thresholds.min_effect); None under 3 runs."""
    g = g.sort_values(["started_at", "run_id"]).tail(REFERENCE_RUNS)
    if len(g) < 3:
        return None
    med = float(np.median(g["median"]))
    return {"median": med, "cv": night_cv(list(g["median"])), "gate": Thresholds().min_effect,
            "first": g.iloc[0], "last": g.iloc[-1]}


def _pos(v, x: str):
    """A shape's x: a time as naive UTC text (Plotly's date axis), anything else as it is."""
    if x != "started_at":
        return v
    t = pd.Timestamp(v)
    return (t.tz_convert("UTC").tz_localize(None) if t.tzinfo else t).isoformat(sep=" ")


def _bands(fig: go.Figure, g: pd.DataFrame, x: str, color: str) -> None:
    """Over a line's reference runs: its night-to-night spread (median +- 1 sd, shaded) and the gate's
    threshold (median +- min_effect, dotted), so a step can be read against what would alert."""
    ref = reference(g)
    if ref is None:
        return
    m, x0, x1 = ref["median"], _pos(ref["first"][x], x), _pos(ref["last"][x], x)
    fig.add_shape(type="rect", xref="x", yref="y", x0=x0, x1=x1, y0=m * (1 - ref["cv"]), y1=m * (1 + ref["cv"]),
                  fillcolor=color, opacity=0.12, line_width=0, layer="below", name="night-to-night spread")
    for sign in (-1, 1):
        fig.add_shape(type="line", xref="x", yref="y", x0=x0, x1=x1, y0=m * (1 + sign * ref["gate"]),
                      y1=m * (1 + sign * ref["gate"]), line=dict(color=color, dash="dot", width=1),
                      name="gate threshold")


def _change_marks(fig: go.Figure, points: pd.DataFrame, x: str, change_points, acks) -> None:
    """Vertical lines at change points and acknowledgements, labels staggered on rows above the plot."""
    by_run = points.drop_duplicates("run_id").set_index("run_id")
    commits = list(dict.fromkeys(points.sort_values("started_at")["commit"]))
    if x == "started_at":
        times = pd.to_datetime(points["started_at"], utc=True)
        lo, span = times.min().value, (times.max() - times.min()).value
    else:
        lo, span = (0, len(commits) - 1) if x == "commit" else (1, int(points["order"].max()) - 1)
    marks = []
    for frame, run_col, time_col, style in ((change_points, "run_id", "run_started_at", "dash"),
                                            (acks, "from_run_id", "from_started_at", "dot")):
        if frame is None or frame.empty:
            continue
        for r in frame.to_dict("records"):
            run = r[run_col]
            if x == "started_at":
                t = pd.Timestamp(r[time_col])
                pos = (t.tz_convert("UTC").tz_localize(None) if t.tzinfo else t).isoformat(sep=" ")
                num = (t.tz_localize("UTC") if t.tzinfo is None else t).value
            elif run in by_run.index:
                pos = by_run.loc[run, x]
                num = float(pos) if x == "order" else commits.index(pos)
            else:
                continue
            color = "#2563eb" if style == "dot" else ("#dc2626" if r.get("kind") == "regression" else "#16a34a")
            text = f"ack: {r.get('who', '')}" if style == "dot" else f"change {r.get('rel_change', 0) or 0:+.1%}"
            marks.append((pos, num, style, color, text))
    if not marks:
        return
    levels = label_levels([(m[1] - lo) / (span or 1) for m in marks], width=0.12)
    for (pos, _, style, color, text), level in zip(marks, levels):
        # Shapes and annotations by hand: add_vline's annotation cannot sit on a category axis.
        fig.add_shape(type="line", xref="x", yref="paper", x0=pos, x1=pos, y0=0, y1=1,
                      line=dict(dash=style, color=color, width=2))
        fig.add_annotation(x=pos, y=1 + 0.06 * level, xref="x", yref="paper", text=text, showarrow=False,
                           yanchor="bottom", font=dict(color=color))
    fig.update_layout(margin=dict(t=40 + 28 * max(levels)))


def compare_link(points: pd.DataFrame, line: str, run_id: str, x: str) -> Optional[dict]:
    """Compare's query parameters for a clicked point: its run against the line's run before it (on the
    commit axis: its commit against the line's commit before, every run of each on that machine); None for
    the line's first point."""
    g = points[(points["line"] == line) & (points["status"] == "ok")].sort_values(["started_at", "run_id"])
    runs = list(dict.fromkeys(g["run_id"]))
    if run_id not in runs:
        return None
    if x == "commit":
        commits = list(dict.fromkeys(c for c in g["git_commit"] if isinstance(c, str) and c))
        this = g.loc[g["run_id"] == run_id, "git_commit"].iloc[0]
        i = commits.index(this) if this in commits else 0
        if i == 0:
            return None
        hw = g.loc[g["run_id"] == run_id, "hardware_key"].iloc[0]
        return {"by": "commit", "hw": hw, "baseline": commits[i - 1], "candidate": this}
    i = runs.index(run_id)
    return {"baseline": runs[i - 1], "candidate": run_id} if i else None
