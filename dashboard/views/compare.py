"""Compare page: a baseline run and a candidate run side by side, series by series."""
import plotly.graph_objects as go
import streamlit as st

from dashboard import data, plots, verdict
from db.escape import md_text

st.header("Compare")
url = data.db_url()
runs = data.runs(url)
if runs.empty:
    data.empty_note("runs")
    st.stop()

labels = {r["run_id"]: data.run_label(r) for r in runs.to_dict("records")}
ids = list(labels)


def resolve(ref):
    """A run id from a run id, a commit (or 7+ hex prefix) or a branch: the newest match, as the gate does."""
    if not ref or ref in labels:
        return ref
    commits = runs["git_commit"].fillna("").astype(str)
    hit = runs[(commits == ref) | (commits.str.startswith(ref) & (len(ref) >= 7)) | (runs["git_branch"] == ref)]
    return hit["run_id"].iloc[0] if len(hit) else None


cand_id = resolve(st.query_params.get("candidate")) or ids[0]
cand_row = runs[runs["run_id"] == cand_id].iloc[0]
same = runs[(runs["hardware_key"] == cand_row["hardware_key"]) & (runs["tier"] == cand_row["tier"])
            & (runs["started_at"] < cand_row["started_at"])]
base_default = resolve(st.query_params.get("baseline")) or (same["run_id"].iloc[0] if len(same) else cand_id)
c1, c2 = st.columns(2)
with c1:
    base_id = st.selectbox("baseline", ids, index=ids.index(base_default) if base_default in ids else 0,
                           format_func=labels.get, key="cmp_base")
with c2:
    cand_id = st.selectbox("candidate", ids, index=ids.index(cand_id), format_func=labels.get, key="cmp_cand")

base, cand = data.run_results(url, base_id), data.run_results(url, cand_id)
techniques = sorted(set(cand["technique"]))
chosen = st.multiselect("techniques (none: all)", techniques, key="cmp_tech")
if chosen:
    base, cand = base[base["technique"].isin(chosen)], cand[cand["technique"].isin(chosen)]
if base_id == cand_id:
    st.warning("Baseline and candidate are the same run: every series is stable by construction.")
b_run, c_run = runs.set_index("run_id").loc[base_id], runs.set_index("run_id").loc[cand_id]
if b_run["hardware_key"] != c_run["hardware_key"]:
    st.warning(f"Different hardware: {md_text(b_run['hardware'])} vs {md_text(c_run['hardware'])}. "
               "Timings are not comparable.")
if b_run["software_key"] != c_run["software_key"]:
    st.info(f"Software differs: {md_text(b_run['software'])} → {md_text(c_run['software'])}")

cmp = verdict.compare(base, cand)
counts = {k: n for i, (k, n) in enumerate(verdict.counts(cmp).items()) if n or i < 5}
cols = st.columns(len(counts))
for col, (status, n) in zip(cols, counts.items()):
    col.metric(status, n)
st.caption("Per series, with the gate's rules (db/verdict): timings by Mann-Whitney U on the two runs' samples "
           "(p < 0.01 and a median change >= 5 %; host-timer timings shown, not gated), errors against their "
           "stored tolerance or bound, quality fractions as k of n (Fisher's exact test, change >= 0.05); the "
           "metric's direction decides regressed or improved.")

shown = cmp[cmp["rel_change"].notna()].head(60)
fig = go.Figure(go.Bar(
    x=shown["rel_change"] * 100, orientation="h",
    y=shown["impl"] + " / " + shown["case_id"] + " · " + shown["metric"],
    marker_color=[plots.STATUS_COLORS[s] for s in shown["label"]],
    customdata=shown[["status", "baseline", "candidate"]].to_numpy(),
    hovertemplate="%{x:+.2f} %<br>%{customdata[0]}<br>%{customdata[1]:.4g} → %{customdata[2]:.4g}<extra></extra>"))
fig.update_layout(xaxis_title="candidate vs baseline, median change (%)", height=160 + 18 * len(shown),
                  yaxis=dict(autorange="reversed"), margin=dict(t=30, b=30))
st.plotly_chart(plots.inert(fig), key="compare_chart")
st.dataframe(cmp.drop(columns=["benchmark_id"]), hide_index=True,
             column_config={"rel_change": st.column_config.NumberColumn(format="percent")})
