"""Runs page: every stored run with its wall time and results by status, the time against the nightly
budget, and one run beside the run before it (Compare)."""
import streamlit as st

from dashboard import data, runs, url_state
from db.escape import md_code, md_text

st.header("Runs")
url = data.db_url()
every = data.run_table(url)
if every.empty:
    data.empty_note("runs")
    st.stop()

hw_names = every.drop_duplicates("hardware_key").set_index("hardware_key")["hardware"].to_dict()
c1, c2 = st.columns(2)
with c1:
    tiers = url_state.multiselect("tiers (none: all)", sorted(every["tier"].unique()), "tier", key="runs_tier")
with c2:
    hws = url_state.multiselect("hardware (none: all)", list(hw_names), "hw", key="runs_hw",
                                format_func=lambda k: f"{hw_names.get(k, k)} ({k})")
shown = runs.narrow(every, tiers, hws)
if shown.empty:
    st.info("No runs match these filters.")
    st.stop()

st.plotly_chart(runs.duration_chart(shown), key="runs_duration_chart")
late = runs.over_budget(shown)
st.caption(f"Wall time from the run's start to its end (results written, ceilings and worker start-up included). "
           f"The nightly tier's budget is {runs.BUDGET_MIN:.0f} minutes on one GPU host; `kwatch estimate --tier "
           f"nightly` predicts a tier's time from the job times runs recorded. Filled: a run of the whole tier; "
           f"hollow: a run narrowed to some techniques (`-t`), implementations or cases, or written outside the runner "
           f"(a study driver's). "
           + (f"**{len(late)} nightly GPU run(s) shown took longer.**" if len(late) else
              "No nightly GPU run shown took longer."))

table = shown.assign(commit=[c[:7] if isinstance(c, str) and c else "" for c in shown["git_commit"]])
st.dataframe(table[["started_at", "tier", "selection", "reason", "hardware", "commit", "minutes", "n_results", "ok",
                    "failed_correctness", "expected_failure", "probe_point", "error", "skipped", "software", "run_id"]],
             hide_index=True, column_config={
                 "minutes": st.column_config.NumberColumn(format="%.1f"),
                 "failed_correctness": st.column_config.NumberColumn(
                     "failed correctness", help="unexpected correctness failures only"),
                 "expected_failure": st.column_config.NumberColumn(
                     "expected failures", help="a known-wrong implementation failing as declared (expect_failure)"),
                 "probe_point": st.column_config.NumberColumn(
                     "probe points", help="points of a technique's probe (an exponent sweep): the error is the "
                                          "measurement, not a failure")})

st.subheader("One run")
chosen = data.pick_run(shown, "runs_pick")
row = shown[shown["run_id"] == chosen].iloc[0]
before = runs.previous(every, chosen)
left, right = st.columns([4, 1.4])
minutes = "no end recorded" if row["minutes"] != row["minutes"] else f"{row['minutes']:.1f} min"
left.markdown(f"{md_code(row['run_id'], table=False)} · {md_text(row['tier'])} ({md_text(row['selection'])}) · "
              f"{md_text(row['hardware'])} · "
              f"{minutes} · {int(row['n_results'])} results: {int(row['ok'])} ok, "
              f"{int(row['failed_correctness'])} failed correctness, {int(row['error'])} errors, "
              f"{int(row['skipped'])} skipped; {int(row['expected_failure'])} expected failures and "
              f"{int(row['probe_point'])} probe points (measurements, not failures)")
with right:
    if before:
        st.page_link("views/compare.py", label="Compare with the run before",
                     query_params={"baseline": before, "candidate": chosen})
    else:
        st.caption("the first run of its tier on this hardware")
