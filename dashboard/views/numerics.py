"""Numerics page: FP32-emulation error over the two operand exponents; ULP error of the exp variants."""
import plotly.graph_objects as go
import streamlit as st

from dashboard import data, plots

CLAIMED_BF16X6 = (-110, 111)  # the page: BF16x6 "valid when the exponent range is ... roughly [-110, 111]"
url = data.db_url()

st.header("Numerics")
st.subheader("FP32 emulation: relative error over the operands' exponents")
sweep_runs = data.technique_runs(url, "gemm_fp32_emulation", ("rel_err",), "exp_a")
run_id = data.pick_run(sweep_runs, "num_sweep_run", "exponent-sweep run")
if run_id is None:
    data.empty_note("exponent sweeps (gemm_fp32_emulation rel_err with params exp_a, exp_b)")
else:
    sweep = data.with_params(data.technique_results(url, "gemm_fp32_emulation", ("rel_err",), (run_id,), "exp_a"))
    sweep = sweep[(sweep["status"] == "ok") & sweep["p_exp_b"].notna()]
    st.caption("Each cell: relative error vs the fp64 oracle of a GEMM whose A operand has exponents "
               "around exp_a and B around exp_b (max over cases). Dashed box: the claimed BF16x6 range "
               f"{list(CLAIMED_BF16X6)} on both operands. A white cell is an exact zero or no result.")
    impls = sorted(sweep["impl"].unique())
    shown = st.multiselect("schemes", impls, default=impls, key="num_schemes")
    cols = st.columns(2)
    for i, impl in enumerate(shown):
        g = sweep[sweep["impl"] == impl]
        grid = g.pivot_table(index="p_exp_a", columns="p_exp_b", values="value", aggfunc="max").sort_index()
        fig = plots.heatmap(grid, impl, "exp_b (exponent of B)", "exp_a (exponent of A)", "rel_err",
                            box=CLAIMED_BF16X6)
        with cols[i % 2]:
            st.plotly_chart(fig, key=f"num_heat_{impl}")

st.subheader("Exponential variants: error in ULP")
ulp_metrics = [m for m in data.catalog(url).query("technique == 'exp_approx'")["metric"].unique()
               if str(m).startswith("ulp")]
exp_runs = data.technique_runs(url, "exp_approx", tuple(ulp_metrics)) if ulp_metrics else data.runs(url).iloc[0:0]
run_id = data.pick_run(exp_runs, "num_exp_run", "exp_approx run")
if run_id is None:
    data.empty_note("ULP metrics of exp_approx (metrics named ulp_*)")
else:
    metric = st.selectbox("metric", sorted(ulp_metrics), key="num_ulp_metric")
    pts = data.with_params(data.technique_results(url, "exp_approx", (metric,), (run_id,)))
    pts = pts[pts["status"] == "ok"]
    numeric = [c for c in pts.columns if c.startswith("p_") and pts[c].nunique() > 1
               and str(pts[c].dtype) != "object"]
    x = st.selectbox("x axis", numeric or ["case_id"], key="num_ulp_x",
                     format_func=lambda c: c[2:] if c.startswith("p_") else c)
    fig = go.Figure()
    for impl, g in pts.groupby("impl"):
        g = g.groupby(x, as_index=False)["value"].max().sort_values(x)
        fig.add_trace(go.Scatter(x=g[x], y=g["value"], mode="lines+markers", name=impl))
    fig.update_layout(xaxis_title=x[2:] if x.startswith("p_") else x, yaxis_title=metric, yaxis_type="log",
                      height=420, margin=dict(t=30, b=30))
    st.plotly_chart(fig, key="num_ulp_chart")
    st.dataframe(pts[["impl", "case_id", "metric", "value", "params"]], hide_index=True)
