"""Write actions from the web: acknowledging a change point. Off unless `kwatch dashboard` was given
--writes-db (a writer role's URL) and --identity-header (the header a trusted sign-in proxy sets);
each action is recorded with the identity from that header. Reads never use the writer's connection."""
from __future__ import annotations

import os

import pandas as pd
import streamlit as st

from dashboard.cli import IDENTITY_HEADER, WRITES_DB
from db.actions import acknowledge
from db.engine import open_db
from db.escape import clip, md_text


def enabled() -> bool:
    return bool(os.environ.get(WRITES_DB) and os.environ.get(IDENTITY_HEADER))


def identity() -> str | None:
    """Who is asking: the identity header of this browser session's request, else None."""
    header = os.environ.get(IDENTITY_HEADER, "")
    value = (st.context.headers.get(header) or "").strip() if header else ""
    return clip(value, 100) or None


def ack_form(change_points: pd.DataFrame, key: str) -> None:
    """Acknowledge one of `change_points` (rows with id, run_id, rel_change, kind) as the signed-in
    person; or say why the form is not offered."""
    if not enabled():
        st.caption("Acknowledging from the web is off on this dashboard; use "
                   "`kwatch ack ID --who NAME --why REASON`.")
        return
    who = identity()
    if who is None:
        st.warning(f"Sign in to acknowledge: this request carries no "
                   f"`{md_text(os.environ[IDENTITY_HEADER])}` header from the sign-in proxy.")
        return
    if change_points.empty:
        return
    labels = {int(r["id"]): f"#{int(r['id'])}: {r['kind']} {r['rel_change']:+.1%} at run {str(r['run_id'])[:12]}"
              for r in change_points.to_dict("records")}
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
