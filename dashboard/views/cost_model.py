"""Cost model page: the prefill-share calculator, with measured points over the model."""
import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from dashboard import data, plots, url_state
from suite.techniques.prefill_cost_model.common import SHAPES, predicted

url = data.db_url()
st.header("Cost model: where sparse attention pays")
st.caption("Attention work in query-key pairs (the page's `attn_cost`): prefill p²/2, decode p·g + g²/2. "
           "Sparsity multiplies prefill only: decode is already linear in the cache, so sparse attention "
           "there saves bandwidth, not arithmetic.")
c1, c2, c3 = st.columns(3)
with c1:
    prompt = url_state.number("prompt tokens p", "prompt", 8_000, 1, 10_000_000, key="cost_prompt", step=1000)
with c2:
    generated = url_state.number("generated tokens g", "generated", 500, 0, 1_000_000, key="cost_generated", step=100)
with c3:
    sparsity = url_state.number("fraction of keys attended", "attended", 0.10, 0.01, 1.0, key="cost_sparsity",
                                widget=st.slider, step=0.01)
s = predicted(prompt, generated, sparsity)
m1, m2, m3, m4 = st.columns(4)
m1.metric("prefill share", f"{s['prefill_share']:.0%}")
m2.metric("dense pairs", f"{s['dense']:.3e}")
m3.metric("sparse pairs", f"{s['sparse']:.3e}")
m4.metric("saving", f"{s['saving']:.1f}x")

ps = np.unique(np.logspace(2, 6.3, 120).astype(int))
curve = pd.DataFrame([{"prompt": p, **predicted(p, generated, sparsity)} for p in ps])
fig = go.Figure()
fig.add_trace(go.Scatter(x=curve["prompt"], y=curve["saving"], mode="lines",
                         name=f"model: g={generated}, {sparsity:.0%} of keys"))
page = pd.DataFrame([{"name": n, "prompt": p, **predicted(p, g, 0.10)} for n, p, g in SHAPES])
fig.add_trace(go.Scatter(x=page["prompt"], y=page["saving"], mode="markers+text", text=page["name"],
                         textposition="top left", name="page's workloads (own g, 10%)",
                         marker=dict(size=9, symbol="diamond")))

cat = data.catalog(url)
names = sorted(cat[cat["technique"] == "prefill_cost_model"]["metric"].unique())
saving_metrics = tuple(m for m in names if m.startswith("measured_saving"))
measured = data.with_params(data.technique_results(url, "prefill_cost_model",
                                                   saving_metrics + ("measured_prefill_share",)))
if not measured.empty and "p_prompt" in measured:
    measured = measured[(measured["status"] == "ok") & measured["p_prompt"].notna()]
    # each workload's newest stored run per GPU (rows come oldest first): two stored runs draw one point, not two
    measured = measured.drop_duplicates(["metric", "hardware", "case_id"], keep="last")
    for (metric, hw), g in measured[measured["metric"].isin(saving_metrics)].groupby(["metric", "hardware"]):
        label = metric.removeprefix("measured_saving_").replace("_", " ")
        fig.add_trace(go.Scatter(
            x=g["p_prompt"], y=g["value"], mode="markers", marker=dict(size=10, symbol="circle-open"),
            name=f"measured on {hw}: {label}", customdata=g[["case_id", "p_generated", "p_density"]].to_numpy(),
            hovertemplate="%{customdata[0]} (g=%{customdata[1]}, density %{customdata[2]}): %{y:.2f}x"))
fig.update_layout(xaxis_type="log", xaxis_title="prompt tokens", yaxis_title="attention-work saving (x)",
                  height=480, margin=dict(t=30, b=30), legend=dict(orientation="h", y=-0.25))
fig.add_trace(go.Scatter(x=[prompt], y=[s["saving"]], mode="markers", name="your workload",
                         marker=dict(size=16, symbol="star", color="#f59e0b", line=dict(width=1, color="#000"))))
st.plotly_chart(plots.inert(fig), key="cost_chart")
if measured.empty:
    st.caption("No measured points yet (prefill_cost_model results: measured_saving_*).")
else:
    st.caption("Measured: wall time of dense (cuDNN) vs block-sparse prefill attention at the workload's "
               "density, plus decode time, per workload at its own g; 'with <selector>' adds the selector's "
               "own cost; each GPU's newest stored run. The model's diamonds use the same workloads at 10 %.")
    share = measured[measured["metric"] == "measured_prefill_share"]
    if not share.empty:
        cases = share.drop_duplicates("case_id")
        model_share = [predicted(p, g, 1.0)["prefill_share"] for p, g in zip(cases["p_prompt"], cases["p_generated"])]
        bars = go.Figure([go.Bar(x=cases["case_id"], y=model_share, name="model: share of attention pairs")]
                         + [go.Bar(x=g["case_id"], y=g["value"], name=f"measured on {hw}: share of attention time")
                            for hw, g in share.groupby("hardware", sort=True)])
        bars.update_layout(barmode="group", yaxis_title="prefill share", yaxis_range=[0, 1], height=340,
                           margin=dict(t=30, b=30))
        st.plotly_chart(plots.inert(bars), key="cost_share_chart")
st.dataframe(page.rename(columns={"prefill_share": "prefill share (dense)"}), hide_index=True)
