"""Claims page: every claim beside what we reproduced, with source, who measured it, hardware, status."""
import logging
import math

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from dashboard import data, plots, url_state
from db.errors import page_message

STATUS_COLORS = {"reproduced": "#16a34a", "not reproduced": "#f59e0b", "contradicted": "#dc2626",
                 "not reproducible on our hardware": "#6366f1", "pending": "#94a3b8"}
url = data.db_url()
st.header("Claims")
try:
    ledger = data.claims(url)
except ImportError as exc:
    st.info(f"The claims ledger is not available in this checkout: {exc}")
    st.stop()
except Exception as exc:  # the ledger is computed from stored results; say why it could not be
    logging.getLogger("kwatch.dashboard").exception("claims ledger failed")
    st.error(page_message(exc))
    st.stop()
if ledger.empty:
    st.info("No claims are registered.")
    st.stop()

statuses = [s for s in STATUS_COLORS if s in set(ledger["status"])] + \
    sorted(set(ledger["status"]) - set(STATUS_COLORS))
counts = ledger["status"].value_counts()
fig = go.Figure(go.Bar(x=[counts.get(s, 0) for s in statuses], y=statuses, orientation="h",
                       marker_color=[STATUS_COLORS.get(s, "#64748b") for s in statuses]))
fig.update_layout(height=80 + 40 * len(statuses), xaxis_title="claims", yaxis=dict(autorange="reversed"),
                  margin=dict(t=20, b=30))
st.plotly_chart(plots.inert(fig), key="claims_status_chart")

c1, c2, c3 = st.columns(3)
with c1:
    chosen = url_state.multiselect("status", statuses, "status", key="claims_status")
with c2:
    who = url_state.multiselect("measured by", sorted(ledger["measured_by"].dropna().unique()), "measured_by",
                                key="claims_who")
with c3:
    sections = url_state.multiselect("section", sorted(ledger["section"].dropna().unique()), "section",
                                     key="claims_section")
shown = ledger
if chosen:
    shown = shown[shown["status"].isin(chosen)]
if who:
    shown = shown[shown["measured_by"].isin(who)]
if sections:
    shown = shown[shown["section"].isin(sections)]


def ours(r) -> str:
    """What we have for the claim: our value, else the labelled projection, else nothing yet."""
    if r["value"] is not None and not (isinstance(r["value"], float) and math.isnan(r["value"])):
        return f"{r['value']:.4g} {r['unit']}"
    p = r["projection"]
    if isinstance(p, dict) and p.get("value") is not None:
        return f"projection: {p['value']:.4g} {p.get('unit', '')} ({p.get('method', '')})"
    return "—"


def measured(r) -> tuple:
    """(day, run ids) of the stored rows the claim's value came from; ("", "") for none (arithmetic,
    projections, pending)."""
    ev = [e for e in (r["evidence"] if isinstance(r["evidence"], list) else []) if isinstance(e, dict)]
    if not ev:
        return "", ""
    when = max(str(e.get("started_at") or "") for e in ev)[:10]
    runs = sorted({str(e.get("run_id"))[:8] for e in ev if e.get("run_id")})
    return when, ", ".join(runs[:2]) + (f" +{len(runs) - 2}" if len(runs) > 2 else "")


records = shown.to_dict("records")
when_run = [measured(r) for r in records]
table = pd.DataFrame({
    "claim": shown["statement"], "claimed": shown["figure"].astype(str) + " " + shown["unit"].astype(str),
    "ours": [ours(r) for r in records], "status": [f"{st_} (unsettled)" if u else st_ for st_, u in zip(shown["status"], shown["unsettled"])],
    "measured by": shown["measured_by"],
    "hardware": shown["hardware"], "band": shown["band"], "date": [w for w, _ in when_run],
    "run": [r for _, r in when_run], "source": shown["source"], "detail": shown["detail"],
    "our nearest measurement": [f"{a:.4g} ({d})" if isinstance(a, (int, float)) and a == a else ""
                                for a, d in zip(shown["analog"], shown["analog_detail"])],
    "link": shown["url"], "id": shown["id"]})
st.caption("'ours' is the value the claim's band judges, from the latest matching run (its date and run id "
           "beside it); where our hardware cannot run the claim it is a roofline projection from datasheet "
           "rates, labelled as such. \"unsettled\": the band's verdicts on the claim's last five matching runs "
           "disagree (the status is the latest run's). Hover a cell for its whole text.")
# widths fit claim .. run in the page at 1280 px; source, detail and the rest follow to the right
WIDTHS = {"claim": 160, "claimed": 70, "ours": 90, "status": 90, "measured by": 80, "hardware": 75, "band": 80,
          "date": 85, "run": 70}
st.dataframe(table, hide_index=True, height=600, key="claims_table",
             column_config={**{c: st.column_config.TextColumn(c, width=w) for c, w in WIDTHS.items()},
                            "link": st.column_config.LinkColumn("link")})
