"""Cost model page: the prefill-share calculator, with measured points over the model."""
import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from dashboard import data
from dashboard.cost import SHAPES, summary

url = data.db_url()
st.header("Cost model: where sparse attention pays")
st.caption("Attention work in query-key pairs (the page's `attn_cost`): prefill p²/2, decode p·g + g²/2. "
           "Sparsity multiplies prefill only: decode is already linear in the cache, so sparse attention "
           "there saves bandwidth, not arithmetic.")
c1, c2, c3 = st.columns(3)
prompt = c1.number_input("prompt tokens p", min_value=1, max_value=10_000_000, value=8_000, step=1000,
                         key="cost_prompt")
generated = c2.number_input("generated tokens g", min_value=0, max_value=1_000_000, value=500, step=100,
                            key="cost_generated")
sparsity = c3.slider("fraction of keys attended", 0.01, 1.0, 0.10, 0.01, key="cost_sparsity")
s = summary(prompt, generated, sparsity)
m1, m2, m3, m4 = st.columns(4)
m1.metric("prefill share", f"{s['prefill_share']:.0%}")
m2.metric("dense pairs", f"{s['dense']:.3e}")
m3.metric("sparse pairs", f"{s['sparse']:.3e}")
m4.metric("saving", f"{s['saving']:.1f}x")

ps = np.unique(np.logspace(2, 6.3, 120).astype(int))
curve = pd.DataFrame([{"prompt": p, **summary(p, generated, sparsity)} for p in ps])
fig = go.Figure()
fig.add_trace(go.Scatter(x=curve["prompt"], y=curve["saving"], mode="lines",
                         name=f"model: g={generated}, {sparsity:.0%} of keys"))
fig.add_trace(go.Scatter(x=[prompt], y=[s["saving"]], mode="markers", marker=dict(size=14, symbol="star"),
                         name="your workload"))
page = pd.DataFrame([{"name": n, "prompt": p, **summary(p, g, 0.10)} for n, p, g in SHAPES])
fig.add_trace(go.Scatter(x=page["prompt"], y=page["saving"], mode="markers+text", text=page["name"],
                         textposition="top left", name="page's workloads (own g, 10%)",
                         marker=dict(size=9, symbol="diamond")))

measured = data.with_params(data.technique_results(url, "prefill_cost_model", ("saving", "speedup")))
if not measured.empty:
    measured = measured[measured["status"] == "ok"]
    xcol = next((c for c in ("p_prompt", "p_p", "p_ctx") if c in measured), None)
    if xcol:
        for (impl, hw), g in measured.groupby(["impl", "hardware"]):
            fig.add_trace(go.Scatter(x=g[xcol], y=g["value"], mode="markers", marker=dict(size=10),
                                     name=f"measured: {impl} on {hw}",
                                     customdata=g["case_id"], hovertemplate="%{customdata}: %{y:.2f}x"))
fig.update_layout(xaxis_type="log", xaxis_title="prompt tokens", yaxis_title="attention-work saving (x)",
                  height=480, margin=dict(t=30, b=30))
st.plotly_chart(fig, key="cost_chart")
if measured.empty:
    st.caption("No measured points yet (prefill_cost_model results with metric `saving` or `speedup`).")
st.dataframe(page.rename(columns={"prefill_share": "prefill share (dense)"}), hide_index=True)
