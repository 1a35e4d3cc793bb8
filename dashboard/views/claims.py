"""Claims page: every claim beside what we reproduced, one row per GPU that measured it (the GPU named), with
source, who measured it, the hardware it was claimed on, status; one claim read whole below the table."""
import logging
import math

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from dashboard import data, plots, url_state
from db.errors import page_message
from db.escape import md_text

STATUS_COLORS = {"reproduced": "#16a34a", "not reproduced": "#f59e0b", "contradicted": "#dc2626",
                 "confounded": "#a855f7", "censored": "#0ea5e9", "not reproducible on our hardware": "#6366f1",
                 "pending": "#94a3b8"}
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
fig.update_layout(height=80 + 40 * len(statuses), xaxis_title="rows (a claim per GPU that measured it)",
                  yaxis=dict(autorange="reversed"),
                  margin=dict(t=20, b=30))
st.plotly_chart(plots.inert(fig), key="claims_status_chart")

c0, c1, c2, c3 = st.columns(4)
gpus = sorted({g for g in ledger["gpu"] if g})
with c0:
    on = url_state.multiselect("measured on", gpus, "gpu", key="claims_gpu")
with c1:
    chosen = url_state.multiselect("status", statuses, "status", key="claims_status")
with c2:
    who = url_state.multiselect("measured by", sorted(ledger["measured_by"].dropna().unique()), "measured_by",
                                key="claims_who")
with c3:
    sections = url_state.multiselect("section", sorted(ledger["section"].dropna().unique()), "section",
                                     key="claims_section")
shown = ledger
if on:
    shown = shown[shown["gpu"].isin(on)]
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
    """(day, run ids) of the stored rows the claim's value came from; ("", "arithmetic") for a computed
    value, ("", "") for none (projections, pending)."""
    ev = [e for e in (r["evidence"] if isinstance(r["evidence"], list) else []) if isinstance(e, dict)]
    if not ev:
        return ("", "arithmetic") if r["check"] == "arithmetic" else ("", "")
    when = max(str(e.get("started_at") or "") for e in ev)[:10]
    runs = sorted({str(e.get("run_id"))[:8] for e in ev if e.get("run_id")})
    return when, ", ".join(runs[:2]) + (f" +{len(runs) - 2}" if len(runs) > 2 else "")


def others(r) -> str:
    """Our figures on GPUs other than the claim's own hardware, each labelled (never the row's status)."""
    return "; ".join(f"{o['gpu']}: {o['value']:.4g}" for o in (r["others"] if isinstance(r["others"], list) else []))


records = shown.to_dict("records")
when_run = [measured(r) for r in records]
table = pd.DataFrame({
    "claim": shown["statement"], "GPU": [g or ("arithmetic" if c == "arithmetic" else "—")
                                        for g, c in zip(shown["gpu"], shown["check"])],
    "claimed": shown["figure"].astype(str) + " " + shown["unit"].astype(str),
    "ours": [ours(r) for r in records],
    "status": [f"{st_} (unsettled)" if u else st_ for st_, u in zip(shown["status"], shown["unsettled"])],
    "measured by": shown["measured_by"], "claimed on": shown["hardware"], "date": [w for w, _ in when_run],
    "run": [r for _, r in when_run], "other hardware": [others(r) for r in records], "band": shown["band"],
    "source": shown["source"], "detail": shown["detail"],
    "our nearest measurement": [f"{a:.4g} ({d})" if isinstance(a, (int, float)) and a == a else ""
                                for a, d in zip(shown["analog"], shown["analog_detail"])],
    "link": shown["url"], "id": shown["id"]})
st.caption("One row per claim and GPU that measured it ('GPU'); a figure measured on one GPU never stands for "
           "another. 'ours' is the value the claim's band judges, from the latest matching run on that GPU (its "
           "date and run id beside it); where our hardware cannot run the claim it is a roofline projection from "
           "datasheet rates, labelled as such, and 'other hardware' lists our figures on other GPUs. "
           "\"unsettled\": the band's verdicts on the row's last five runs disagree. Select a row to read it whole.")
# widths fit claim .. run in the page at 1280 px; other hardware, band, source and the rest follow to the right
WIDTHS = {"claim": 150, "GPU": 50, "claimed": 65, "ours": 85, "status": 90, "measured by": 75, "claimed on": 70,
          "date": 80, "run": 65}
picked = st.dataframe(table, hide_index=True, height=min(560, 38 + 35 * len(table)), key="claims_table",
                      on_select="rerun",
                      selection_mode="single-row",
                      column_config={**{c: st.column_config.TextColumn(c, width=w) for c, w in WIDTHS.items()},
                                     "link": st.column_config.LinkColumn("link")})
rows = picked.selection.rows if picked is not None and hasattr(picked, "selection") else []
one = records[rows[0]] if rows else (records[0] if records else None)
if one is not None:
    st.subheader("The claim, whole")
    gpu = f" on {one['gpu']}" if one["gpu"] else ""
    lines = [f"**{md_text(one['statement'], 2000)}**", "",
             f"- claimed: {md_text(one['figure'])} {md_text(one['unit'])} ({md_text(one['measured_by'])}, "
             f"{md_text(one['hardware'])}); source: {md_text(one['source'], 1000)}",
             f"- status{gpu}: **{md_text(one['status'])}**; ours: {md_text(ours(one))}"
             + (f"; band {md_text(one['band'])}" if one["band"] else "")]
    if one["quantity"]:
        lines.append(f"- measured quantity: {md_text(one['quantity'], 2000)}")
    if one["detail"]:
        lines.append(f"- evidence: {md_text(one['detail'], 4000)}")
    for o in one["others"] if isinstance(one["others"], list) else []:
        lines.append(f"- other hardware, {md_text(o['gpu'])} (not this claim's status): {o['value']:.4g} "
                     f"{md_text(o['unit'])}")
    if one["note"]:
        lines.append(f"- note: {md_text(one['note'], 2000)}")
    st.markdown("\n".join(lines))
