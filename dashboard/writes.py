"""Write actions from the web: acknowledging a change point, muting a series. Off unless `kwatch dashboard` was given
--writes-db (a writer role's URL) and --identity-header (the header a trusted sign-in proxy sets);
each action is recorded with the identity from that header. Reads never use the writer's connection."""
from __future__ import annotations

import os
from datetime import datetime, timedelta, timezone

import pandas as pd
import streamlit as st

from dashboard.cli import IDENTITY_HEADER, WRITES_DB
from db.actions import acknowledge, mute
from db.engine import open_db
from db.escape import clip, md_text


def enabled() -> bool:
    return bool(os.environ.get(WRITES_DB) and os.environ.get(IDENTITY_HEADER))


def identity() -> str | None:
    """Who is asking: the identity header of this browser session's request, else None."""
    header = os.environ.get(IDENTITY_HEADER, "")
    value = (st.context.headers.get(header) or "").strip() if header else ""
    return clip(value, 100) or None


def signed_in(what: str = "acknowledge") -> str | None:
    """The identity to write as; or None, having said why `what` is not offered."""
    if not enabled():
        st.caption("Acknowledging from the web is off on this dashboard, and so is muting; use "
                   "`kwatch ack ID --who NAME --why REASON` or `kwatch mute add -t TECHNIQUE ... --who NAME --why REASON`.")
        return None
    who = identity()
    if who is None:
        st.warning(f"Sign in to {what}: this request carries no "
                   f"`{md_text(os.environ[IDENTITY_HEADER])}` header from the sign-in proxy.")
    return who


def _label(r) -> str:
    return f"#{int(r['id'])}: {r['kind']} {r['rel_change']:+.1%} at run {str(r['run_id'])[:12]}"


def ack_form(change_points: pd.DataFrame, key: str) -> None:
    """Acknowledge one of `change_points` (rows with id, run_id, rel_change, kind) as the signed-in
    person; or say why the form is not offered."""
    who = signed_in("acknowledge")
    if who is None or change_points.empty:
        return
    labels = {int(r["id"]): _label(r) for r in change_points.to_dict("records")}
    with st.form(key=key, clear_on_submit=True):
        st.caption(f"Acknowledging as **{md_text(who)}**: the series is re-baselined from that run.")
        cp = st.selectbox("change point", list(labels), format_func=labels.get)
        why = st.text_input("why (recorded with your name)", max_chars=500)
        if st.form_submit_button("Acknowledge"):
            if not why.strip():
                st.error("Say why the change is intended.")
                return
            with open_db(os.environ[WRITES_DB], migrate=False)() as s, s.begin():
                aid = acknowledge(s, cp, f"{who} (dashboard)", why.strip())
            st.cache_data.clear()
            st.success(f"Acknowledgement {aid} recorded for {md_text(who)}.")


def mute_form(alerts: pd.DataFrame, key: str) -> None:
    """Mute the series of one of `alerts` (rows with id, run_id, rel_change, kind and the series key) on
    its hardware, for some days, as the signed-in person; or say why the form is not offered."""
    who = signed_in("mute")
    if who is None or alerts.empty:
        return
    rows = {int(r["id"]): r for r in alerts.to_dict("records")}
    with st.form(key=key, clear_on_submit=True):
        st.caption(f"Muting as **{md_text(who)}**: the series (on that hardware, any software and protocol) "
                   "is listed but does not fail the gate or the nightly until the mute ends.")
        cp = st.selectbox("series of change point", list(rows),
                          format_func=lambda i: f"{_label(rows[i])} · {rows[i]['impl']} / {rows[i]['case_id']} / "
                                                f"{rows[i]['metric']}")
        days = st.number_input("days", min_value=1, max_value=90, value=14)
        why = st.text_input("why (recorded with your name)", max_chars=500)
        if st.form_submit_button("Mute"):
            if not why.strip():
                st.error("Say why the series is muted.")
                return
            r = rows[cp]
            until = datetime.now(timezone.utc) + timedelta(days=int(days))
            with open_db(os.environ[WRITES_DB], migrate=False)() as s, s.begin():
                mid = mute(s, r["technique"], r["impl"], r["case_id"], r["metric"], r["hardware_key"],
                           f"{who} (dashboard)", why.strip(), until)
            st.cache_data.clear()
            st.success(f"Mute {mid} recorded for {md_text(who)} until {until:%Y-%m-%d %H:%M} UTC.")
