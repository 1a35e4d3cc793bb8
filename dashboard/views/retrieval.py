"""Retrieval page: needle heat maps (context x depth) per selector; MQAR recall against context."""
import math

import plotly.graph_objects as go
import streamlit as st

from dashboard import data, plots, url_state

url = data.db_url()
cat = data.catalog(url)
st.header("Retrieval")

st.subheader("Needle in a haystack: context length x needle depth, per selector")
needle_metrics = sorted(cat[cat["technique"] == "needle_retrieval"]["metric"].unique())
quality = [m for m in needle_metrics if m not in ("latency_ms", "tflops", "gbps")] or needle_metrics
needle_runs = data.technique_runs(url, "needle_retrieval", tuple(quality), "depth") if quality else cat.iloc[0:0]
run_id = data.pick_run(needle_runs, "ret_needle_run", "needle run", param="needle_run")
if run_id is None:
    data.empty_note("needle results (needle_retrieval with params ctx, depth)")
else:
    default = quality.index("recall") if "recall" in quality else 0
    metric = url_state.selectbox("metric", quality, "metric", default=quality[default], key="ret_metric")
    pts = data.with_params(data.technique_results(url, "needle_retrieval", (metric,), (run_id,), "depth"))
    pts = pts[pts["status"] == "ok"] if "p_ctx" in pts else pts.iloc[0:0]
    if pts.empty:
        st.info(f"This run has no {metric} rows over ctx and depth.")
    if "p_strength" in pts and pts["p_strength"].nunique() > 1:
        strengths = ["mean over all"] + sorted(pts["p_strength"].dropna().unique().tolist())
        s = url_state.selectbox("needle strength", strengths, "strength", key="ret_strength")
        if s != "mean over all":
            pts = pts[pts["p_strength"] == s]
    st.caption(f"Each cell: {metric} averaged over seeds (and strengths unless one is chosen). "
               "A selector that drops the needle's block shows as a dark cell at that depth.")
    cols = st.columns(2)
    for i, impl in enumerate(sorted(pts["impl"].unique())):
        g = pts[pts["impl"] == impl]
        grid = g.pivot_table(index="p_depth", columns="p_ctx", values="value", aggfunc="mean").sort_index()
        grid.columns = [str(int(c)) if float(c).is_integer() else str(c) for c in grid.columns]
        fig = plots.heatmap(grid, impl, "context length (tokens)", "needle depth", metric, log_z=False)
        fig.update_traces(zmin=0, zmax=1 if pts["value"].max() <= 1 else None)
        with cols[i % 2]:
            st.plotly_chart(plots.inert(fig), key=f"ret_heat_{impl}")

st.subheader("MQAR: recall against context length, beside the loss that cannot see it")
mqar_metrics = sorted(cat[cat["technique"] == "mqar"]["metric"].unique())
recall_metrics = [m for m in mqar_metrics if "recall" in m] or mqar_metrics
loss_metrics = [m for m in mqar_metrics if "loss" in m]
mqar_runs = data.technique_runs(url, "mqar", tuple(recall_metrics)) if recall_metrics else cat.iloc[0:0]
run_id = data.pick_run(mqar_runs, "ret_mqar_run", "MQAR run (preselected: the one with the most points)",
                       largest_first=True, param="mqar_run")


def mqar_figure(pts, metric: str, recall: bool) -> go.Figure:
    """One line per selector (dense included) of `metric` against context length."""
    xcol = next((c for c in ("p_ctx", "p_seq_len", "p_context", "p_n") if c in pts), None)
    fig = go.Figure()
    for i, (impl, g) in enumerate(pts.groupby("impl")):
        g = g.groupby(xcol or "case_id", as_index=False)["value"].mean().sort_values(xcol or "case_id")
        color = plots.PALETTE[i % len(plots.PALETTE)]
        fig.add_trace(go.Scatter(x=g[xcol or "case_id"], y=g["value"], mode="lines+markers", name=impl,
                                 line=dict(color=color), marker=dict(color=color)))
    fig.update_layout(xaxis_title=(xcol or "case_id").removeprefix("p_"), yaxis_title=metric,
                      height=420, margin=dict(t=30, b=30))
    # Both from zero: a zoomed loss axis would dress a 1% difference up as a large one.
    fig.update_yaxes(range=[0, 1.05] if recall else [0, 1.1 * float(pts["value"].max())])
    if xcol:
        plots.log_axis(fig, pts[xcol])
    trained = [n for ls in pts.get("p_trained_lengths", []) if isinstance(ls, list) for n in ls]
    if trained and xcol:  # beyond the longest training length the model extrapolates
        # On a log axis Plotly takes shapes in data units but annotations in log10 units.
        fig.add_vrect(x0=min(trained), x1=max(trained), fillcolor="#94a3b8", opacity=0.15, line_width=0)
        fig.add_annotation(x=math.log10(min(trained)), y=1, xref="x", yref="paper", text="trained lengths",
                           showarrow=False, xanchor="left", yanchor="top")
    return fig


if run_id is None:
    data.empty_note("MQAR results (mqar recall)")
else:
    metric = url_state.selectbox("metric", recall_metrics, "mqar_metric", key="ret_mqar_metric")
    metrics = (metric, *loss_metrics)
    pts = data.with_params(data.technique_results(url, "mqar", metrics, (run_id,)))
    pts = pts[pts["status"] == "ok"]
    if "p_density" in pts and pts["p_density"].nunique() > 1:
        # Dense rows (a run's control model too) carry density 1.0; the selectors are compared at one
        # budget at a time.
        budgets = sorted(d for d in pts["p_density"].dropna().unique() if d < 1.0)
        density = url_state.selectbox("selector density (share of causal blocks)", budgets, "density",
                                      key="ret_mqar_density", format_func=lambda d: f"{d:.0%}")
        pts = pts[(pts["p_density"] == 1.0) | (pts["p_density"] == density)]
    cols = st.columns(2) if loss_metrics else [st.container()]
    with cols[0]:
        st.plotly_chart(plots.inert(mqar_figure(pts[pts["metric"] == metric], metric, True)),
                        key="ret_mqar_chart")
    if loss_metrics:
        with cols[1]:
            lm = loss_metrics[0]
            st.plotly_chart(plots.inert(mqar_figure(pts[pts["metric"] == lm], f"{lm} (non-query tokens)", False)),
                            key="ret_mqar_loss_chart")
        st.caption("Recall falls with the selector while the loss on the other tokens does not move: "
                   "a perplexity check cannot see this failure.")
