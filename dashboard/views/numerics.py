"""Numerics page: FP32-emulation error over the two operand exponents; ULP error of the exp variants."""
import re

import plotly.graph_objects as go
import streamlit as st

from dashboard import data, plots, url_state

SWEEP = "gemm_fp32_emulation_sweep"
CLAIMED_BF16X6 = (-110, 111)  # the page: BF16x6 "valid when the exponent range is ... roughly [-110, 111]"
SWEEP_METRICS = {"within_fp32": "within fp32 accuracy (1) or not (0)", "rel_err": "relative error vs fp64",
                 "rel_err_vs_fp32": "relative error vs fp32 IEEE"}
url = data.db_url()

st.header("Numerics")
st.subheader("FP32 emulation over the operands' exponents")
sweep_runs = data.technique_runs(url, SWEEP, tuple(SWEEP_METRICS), "exp_a")
run_id = data.pick_run(sweep_runs, "num_sweep_run", "exponent-sweep run", param="sweep_run")
if run_id is None:
    data.empty_note(f"exponent sweeps ({SWEEP} results with params exp_a, exp_b)")
else:
    metric = url_state.radio("metric", list(SWEEP_METRICS), "metric", format_func=SWEEP_METRICS.get,
                             horizontal=True, key="num_metric")
    sweep = data.with_params(data.technique_results(url, SWEEP, (metric,), (run_id,), "exp_a"))
    if "p_exp_b" not in sweep:
        st.info(f"This run has no {metric} rows over exp_a and exp_b.")
        st.stop()
    sweep = sweep[sweep["p_exp_b"].notna()]
    st.caption("One cell per grid point: A's elements are ±[1, 2)·2^exp_a, B's ±[1, 2)·2^exp_b. "
               "'Within fp32 accuracy': error <= 4x the error of fp32 IEEE on the same inputs. "
               f"Dashed box: the page's claimed BF16x6 range {list(CLAIMED_BF16X6)} on both operands; "
               "x: no finite output (inf/NaN).")
    impls = sorted(sweep["impl"].unique())
    default = [i for i in impls if re.fullmatch(r"cublas_fp32|(triton|triton_dot)_bf16x[369]", i)] or impls[:4]
    shown = url_state.multiselect("schemes", impls, "scheme", default=default, key="num_schemes")
    cols = st.columns(2)
    for i, impl in enumerate(shown):
        g = sweep[sweep["impl"] == impl]
        grid, marks = plots.sweep_cells(g, "p_exp_a", "p_exp_b")
        binary = metric == "within_fp32"
        fig = plots.heatmap(grid, impl, "exp_b (exponent of B)", "exp_a (exponent of A)", metric,
                            box=CLAIMED_BF16X6, log_z=not binary, marks=marks,
                            zrange=(0, 1) if binary else None)
        with cols[i % 2]:
            st.plotly_chart(plots.inert(fig), key=f"num_heat_{impl}")

st.subheader("Exponential variants: error in ULP over every fp32 input in [-126, 0]")
ULP = ("ulp_max", "ulp_p99", "ulp_p50", "ulp_mean")
exp_runs = data.technique_runs(url, "exp_approx", ULP)
run_id = data.pick_run(exp_runs, "num_exp_run", "exp_approx run", param="exp_run")
if run_id is None:
    data.empty_note("ULP metrics of exp_approx (ulp_max, ulp_p99, ulp_p50, ulp_mean)")
else:
    pts = data.technique_results(url, "exp_approx", ULP, (run_id,))
    pts = pts[pts["status"] == "ok"].assign(sampling=lambda d: d["case_id"].str.split("/").str[-1])
    samplings = sorted(pts["sampling"].unique())
    sampling = url_state.radio("inputs", samplings, "sampling", horizontal=True, key="num_sampling",
                               format_func=lambda s: {"all_fp32": "every fp32 bit pattern",
                                                      "uniform": "uniform grid"}.get(s, s))
    pts = pts[pts["sampling"] == sampling]

    def order(impl: str) -> tuple:
        """MUFU and torch first, then polynomials by degree, then hybrids by polynomial share."""
        m = re.search(r"(\d+)", impl)
        return (0 if "mufu" in impl or "torch" in impl else 1 if "poly" in impl else 2,
                int(m.group(1)) if m else 0, impl)

    impls = sorted(pts["impl"].unique(), key=order)
    fig = go.Figure()
    for metric in ULP:
        g = pts[pts["metric"] == metric].set_index("impl")["value"].groupby(level=0).max()
        y = [g.get(i) for i in impls]
        fig.add_trace(go.Scatter(x=impls, y=[v if v and v > 0 else None for v in y], mode="lines+markers",
                                 name=metric, customdata=y, hovertemplate="%{x}: %{customdata:.4g} ULP"))
    fig.update_layout(xaxis_title="exp2 variant", yaxis_title="error (ULP, log; 0 not drawn)", yaxis_type="log",
                      height=440, margin=dict(t=30, b=30))
    st.plotly_chart(plots.inert(fig), key="num_ulp_chart")
    st.dataframe(pts.pivot_table(index="impl", columns="metric", values="value").reindex(impls),
                 column_config={m: st.column_config.NumberColumn(format="%.4g") for m in ULP})
