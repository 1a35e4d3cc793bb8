"""Alerts page: every change point the online detector stored, newest first, with its state; ack and mute."""
import pandas as pd
import streamlit as st

from dashboard import alerts, data, url_state, writes
from db.alerts import STATES
from db.escape import md_code, md_text

st.header("Alerts")
url = data.db_url()
every = alerts.alerts(url)
if every.empty:
    st.info(f"No change points stored in this database yet: `kwatch detect` (and `kwatch nightly`) store those "
            "the online detector (db/detector.py) finds in the nightly history.")
    st.stop()

hw_names = every.drop_duplicates("hardware_key").set_index("hardware_key")["hardware"].to_dict()
c1, c2, c3, c4 = st.columns([3, 3, 1, 3])
with c1:
    techniques = url_state.multiselect("techniques (none: all)", sorted(every["technique"].unique()), "technique",
                                       key="alerts_tech")
with c2:
    hws = url_state.multiselect("hardware (none: all)", list(hw_names), "hw", key="alerts_hw",
                                format_func=lambda k: f"{hw_names.get(k, k)} ({k})")
with c3:
    age = url_state.selectbox("age (days)", alerts.AGES, "age", default="30", key="alerts_age")
with c4:
    states = url_state.multiselect("states", STATES, "state", default=STATES[:3], key="alerts_state")
shown, hidden = alerts.narrow(every, techniques, hws, age, states)

counts = every["state"].value_counts()
cols = st.columns(len(STATES))
for col, s in zip(cols, STATES):
    col.metric(s, int(counts.get(s, 0)))
st.caption("Change points stored by `kwatch detect` / `kwatch nightly` (db/detector.py: the last 3 nights all "
           "beyond every reference night, median moved >= max(3 %, 1 sd)). **new**: raised on its third night; "
           "**found late**: raised on a night detection did not run on (listed, never failing); **muted**: a mute "
           "in force covers the series; **acknowledged**: re-baselined on purpose. When: the run the change "
           "starts at." + (f" {hidden} older than {age} days are hidden (age: all shows them)." if hidden else ""))

LIMIT = 50
if shown.empty:
    st.info("No alerts match these filters.")
else:
    page = shown.head(LIMIT)
    before = alerts.runs_before(url, page)
    for (_, r), prev in zip(page.iterrows(), before):
        when = pd.Timestamp(r["run_started_at"])
        commit = r["git_commit"][:7] if isinstance(r["git_commit"], str) and r["git_commit"] else "no commit"
        detail = f" ({md_text(r['state_detail'])})" if r["state_detail"] else ""
        left, mid, right = st.columns([8, 1, 1.4])
        left.markdown(f"**{r['kind']} {r['rel_change']:+.1%}** ({r['before_value']:.4g} → {r['after_value']:.4g}) · "
                      f"{when:%Y-%m-%d %H:%M} · {md_code(commit, table=False)} · run {md_code(r['run_id'][:12], table=False)}"
                      f" · {md_text(r['hardware'])} · {md_code(f'{r.technique}/{r.impl}/{r.case_id}', table=False)} · "
                      f"{md_code(r['metric'], table=False)} · *{r['state']}*{detail} · #{int(r['id'])}")
        with mid:
            st.page_link("views/trends.py", label="Trends", query_params=alerts.trends_params(r))
        cmp = alerts.compare_params(r, prev)
        with right:
            if cmp:
                st.page_link("views/compare.py", label="Compare runs", query_params=cmp)
            else:
                st.caption("no run before")
    if len(shown) > LIMIT:
        st.caption(f"The newest {LIMIT} of {len(shown)} are listed; all are in the table below.")
    with st.expander(f"all {len(shown)} as a table"):
        st.dataframe(shown[["id", "run_started_at", "git_commit", "run_id", "hardware", "technique", "impl",
                            "case_id", "metric", "protocol", "before_value", "after_value", "rel_change", "kind",
                            "state", "state_detail", "detected_at", "software"]],
                     hide_index=True, column_config={"rel_change": st.column_config.NumberColumn(format="percent")})

st.subheader("Acknowledge or mute")
open_ = shown[shown["state"] != "acknowledged"]
writes.ack_form(open_, key="alerts_ack")
if writes.enabled() and writes.identity():
    writes.mute_form(open_[open_["state"] != "muted"], key="alerts_mute")
