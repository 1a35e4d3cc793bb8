"""Health page: per hardware, the latest runs of a tier judged series by series (db.verdict, as the gate)."""
import pandas as pd
import streamlit as st

from dashboard import data, plots, url_state
from dashboard.health import counts as count_labels
from dashboard.health import cached as health
from dashboard.health import judged_runs
from dashboard.verdict import FIRST_RUN
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
counts, series = health(url, tier)
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
st.caption("Judged: each hardware's latest run and the runs its series were compared with.")
# "baseline runs" holds a count or, for a GPU's first run, a sentence: shown as text (one Arrow type a column)
st.dataframe(judged_runs(runs, tier, series).astype({"baseline runs": str}), hide_index=True, key="health_runs",
             column_config={
    c: st.column_config.DatetimeColumn(format="YYYY-MM-DD HH:mm") for c in ("latest run", "window from")})

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
first = series[series["label"].isin(list(FIRST_RUN.values()))] if not series.empty else series
st.markdown(f"**{int((status == 'expected failure').sum())}** expected failures and probe points (measurements, "
            f"not failing) · **{int(status.isin(['insufficient data', 'missing baseline']).sum()) - len(first)}** "
            "not compared (no previous result, too few samples, or no counts or bound to judge by)"
            + "".join(f" · **{hw}**: first run on this {'machine' if hw.startswith('CPU ') else 'GPU'}, its "
                      f"{n} series are its baseline from now on" for hw, n in first.groupby("hardware").size().items()))
st.caption("One kernel is one series: a rate (TFLOP/s, GB/s) computed from a kernel's timings is counted with "
           "its latency, not beside it.")


def _when(r, prefix: str = "") -> str:
    """'2026-11-30 06:36 · ed9c4f3 · run 90ea2166deab' for the candidate (or, with prefix 'baseline_', the baseline)."""
    if not isinstance(r.get(prefix + "run_id"), str):
        return "—"
    commit = r.get(prefix + "git_commit")
    return (f"{pd.Timestamp(r[prefix + 'started_at']):%Y-%m-%d %H:%M} · "
            f"{commit[:7] if isinstance(commit, str) and commit else 'no commit'} · run {r[prefix + 'run_id'][:12]}")


def short(h) -> str:
    return h[:7] if isinstance(h, str) and h else "?"


def version(r) -> str:
    """The implementation with its kernel version (impl_hash), and the baseline's where it differs."""
    cand, base = short(r.get("impl_hash")), short(r.get("baseline_impl_hash"))
    moved = f" (kernel changed: {base} → {cand})" if isinstance(r.get("baseline_run_id"), str) and base != cand else ""
    return f"{r['impl']} @{cand}{moved}"


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
    label = (f"{r['label']}{known}{change} · {r['hardware']} · {r['technique']} / {version(r)} / "
             f"{r['case_id']} · {r['metric']} · run {_when(r)} against {_when(r, 'baseline_')}")
    st.page_link("views/trends.py", label=label,
                 query_params={"technique": r["technique"], "impl": r["impl"], "case": r["case_id"],
                               "metric": r["metric"], "hw": r["hardware_key"]})
with st.expander(f"all {len(series)} series"):
    table = series.assign(kernel=series["impl_hash"].map(short), baseline_kernel=series["baseline_impl_hash"].map(short),
                          run=series["run_id"].str[:12], baseline_run=series["baseline_run_id"].str[:12])
    st.dataframe(table[["hardware", "label", "technique", "impl", "kernel", "case_id", "metric", "baseline",
                        "candidate", "rel_change", "p_value", "n_baseline", "n_candidate", "started_at",
                        "git_commit", "run", "baseline_started_at", "baseline_git_commit", "baseline_run",
                        "baseline_kernel", "reason"]],
                 hide_index=True)
