"""Health page: regressed / improved / stable / failing series per hardware for the latest run of a tier."""
import streamlit as st

from dashboard import data, plots, verdict
from dashboard.health import health

st.header("Health")
url = data.db_url()
runs = data.runs(url)
if runs.empty:
    data.empty_note("runs")
    st.stop()

tiers = sorted(runs["tier"].unique())
want = st.query_params.get("tier", "nightly")
tier = st.selectbox("tier", tiers, index=tiers.index(want) if want in tiers else 0,
                    help="the latest runs of this tier on each hardware, each series against its previous result")
counts, series = health(url, runs, tier)
techniques = sorted(series["technique"].unique()) if not series.empty else []
chosen = st.multiselect("techniques (none: all)", techniques, key="health_tech")
if chosen:
    series = series[series["technique"].isin(chosen)]
    counts = (series.groupby(["hardware", "status"]).size().unstack(fill_value=0)
              .reindex(columns=verdict.ORDER, fill_value=0))
st.caption("Each hardware's latest run of the tier (with its other runs of the 24 h before it), each series "
           "against that series' previous result on the hardware, with the gate's rules (timings: Mann-Whitney p < 0.01 and a median change >= 5 %; errors: the "
           "stored tolerance; recall: may not fall).")
st.plotly_chart(plots.status_bars(counts), key="health_bars")

total = {s: int(counts[s].sum()) if s in counts else 0 for s in verdict.ORDER}
cols = st.columns(4)
cols[0].metric("regressed", total["regressed"])
cols[1].metric("improved", total["improved"])
cols[2].metric("stable", total["stable"])
new = int(series["new_failure"].fillna(False).astype(bool).sum()) if not series.empty else 0
cols[3].metric("failing", total["errored"] + total["failed correctness"], help=f"{new} of them new "
               "(the series' previous result did not fail the same way)")

worst = series[series["status"].isin(verdict.FAILING + ("regressed",))]
st.subheader("Worst first")
if worst.empty:
    st.success("Nothing regressed or failing in the latest runs.")
for r in worst.head(20).to_dict("records"):
    change = "" if r["rel_change"] != r["rel_change"] else f" {r['rel_change']:+.1%}"
    known = " (also before)" if r["status"] in verdict.FAILING and not r["new_failure"] else ""
    label = (f"{r['status']}{known}{change} · {r['hardware']} · {r['technique']} / {r['impl']} / "
             f"{r['case_id']} · {r['metric']}")
    st.page_link("views/trends.py", label=label,
                 query_params={"technique": r["technique"], "impl": r["impl"], "case": r["case_id"],
                               "metric": r["metric"], "hw": r["hardware_key"]})
with st.expander(f"all {len(series)} series"):
    st.dataframe(series[["hardware", "status", "technique", "impl", "case_id", "metric", "baseline",
                         "candidate", "rel_change", "p_value", "n_baseline", "n_candidate"]],
                 hide_index=True)
