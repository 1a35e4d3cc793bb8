"""Health page: per hardware, the latest runs of a tier judged series by series (db.verdict, as the gate)."""
import pandas as pd
import streamlit as st

from dashboard import data, plots, url_state
from dashboard.health import counts as count_labels
from dashboard.health import health
from db.verdict import COMPARED, FAILING

st.header("Health")
url = data.db_url()
runs = data.runs(url)
if runs.empty:
    data.empty_note("runs")
    st.stop()

tiers = sorted(runs["tier"].unique())
tier = url_state.selectbox("tier", tiers, "tier", default="nightly", key="health_tier",
                           help="the latest runs of this tier on each hardware, each series against its previous result")
counts, series = health(url, runs, tier)
techniques = sorted(series["technique"].unique()) if not series.empty else []
chosen = url_state.multiselect("techniques (none: all)", techniques, "technique", key="health_tech")
if chosen:
    series = series[series["technique"].isin(chosen)]
    counts = count_labels(series)
st.caption("Each hardware's latest run of the tier (with its other runs of the 24 h before it), each series "
           "against that series' previous result on the hardware, judged by the gate's rules (db/verdict): "
           "timings by Mann-Whitney p < 0.01 and a median change >= 5 % (host-timer timings shown, not gated), "
           "errors against their stored tolerance, quality fractions as k of n by Fisher's exact test and a "
           "change >= 0.05, needle grids pooled per selector and context.")
st.plotly_chart(plots.inert(plots.status_bars(counts)), key="health_bars")

gated = series["gated"].fillna(True).astype(bool) if not series.empty else pd.Series(dtype=bool)
status = series["status"] if not series.empty else pd.Series(dtype=str)
regressed = series[(status == "regressed") & gated]
failing = series[status.isin(FAILING)]
host = series[status.isin(["regressed", "improved"]) & ~gated]
compared = int(status.isin(COMPARED).sum())
cols = st.columns(5)
cols[0].metric("regressed", len(regressed))
cols[1].metric("improved", int(((status == "improved") & gated).sum()))
cols[2].metric("stable", int((status == "stable").sum()))
new = int(failing["new_failure"].fillna(False).astype(bool).sum()) if not failing.empty else 0
cols[3].metric("failing", len(failing), help=f"{new} of them new (the series' previous result did not fail the same way)")
cols[4].metric("host-timer changes", len(host), help="timings from host timers on a shared CPU: shown, never a failure")
st.markdown(f"**{int((status == 'expected failure').sum())}** expected failures and probe points (measurements, "
            f"not failing) · **{int(status.isin(['insufficient data', 'missing baseline']).sum())}** not compared "
            "(no previous result, too few samples, or no counts or bound to judge by)")


def _when(r, prefix: str = "") -> str:
    if not isinstance(r.get(prefix + "run_id"), str):
        return "—"
    commit = r.get(prefix + "git_commit")
    return (f"{pd.Timestamp(r[prefix + 'started_at']):%Y-%m-%d %H:%M} · "
            f"{commit[:7] if isinstance(commit, str) and commit else 'no commit'}")


st.subheader("Worst first")
worst = pd.concat([failing, regressed, host])
if compared == 0:
    st.info(f"Nothing compared: none of the {len(series)} series of the latest {tier} runs has a previous result "
            "it could be judged against, so nothing can be said about regressions yet.")
elif regressed.empty and failing.empty:
    st.success(f"{compared} series compared: nothing regressed or failing in the latest runs.")
for r in worst.head(20).to_dict("records"):
    change = "" if r["rel_change"] != r["rel_change"] else f" {r['rel_change']:+.1%}"
    known = " (also before)" if r["status"] in FAILING and not r["new_failure"] else ""
    label = (f"{r['label']}{known}{change} · {r['hardware']} · {r['technique']} / {r['impl']} / "
             f"{r['case_id']} · {r['metric']} · run {_when(r)} against {_when(r, 'baseline_')}")
    st.page_link("views/trends.py", label=label,
                 query_params={"technique": r["technique"], "impl": r["impl"], "case": r["case_id"],
                               "metric": r["metric"], "hw": r["hardware_key"]})
with st.expander(f"all {len(series)} series"):
    st.dataframe(series[["hardware", "label", "technique", "impl", "case_id", "metric", "baseline",
                         "candidate", "rel_change", "p_value", "n_baseline", "n_candidate", "started_at",
                         "git_commit", "baseline_started_at", "baseline_git_commit", "reason"]],
                 hide_index=True)
