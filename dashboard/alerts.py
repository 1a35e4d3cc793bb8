"""The Alerts page's data: stored change points with their state (db.alerts), cached; filters; the
query parameters of each alert's Trends and Compare links."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Iterable, Optional

import pandas as pd
import streamlit as st

from dashboard.data import TTL
from db import alerts as db_alerts

AGES = ["1", "7", "30", "90", "365", "all"]  # days back from now, by the change's run date


@st.cache_data(ttl=TTL, show_spinner=False)
def alerts(url: str) -> pd.DataFrame:
    """Every stored change point with state and state_detail, newest change first."""
    cps = db_alerts.change_points(url)
    return db_alerts.with_state(cps, db_alerts.acknowledgements(url), db_alerts.mutes(url))


@st.cache_data(ttl=TTL, show_spinner=False)
def runs_before(url: str, shown: pd.DataFrame) -> list[Optional[str]]:
    return db_alerts.runs_before(url, shown)


def narrow(a: pd.DataFrame, techniques: Iterable[str], hardware_keys: Iterable[str], age: str,
           states: Iterable[str], now: Optional[datetime] = None) -> tuple[pd.DataFrame, int]:
    """(the alerts passing the filters, newest first; how many only the age filter hid). Empty
    `techniques` / `hardware_keys` mean all."""
    techniques, hardware_keys = list(techniques), list(hardware_keys)
    keep = a["state"].isin(list(states))
    if techniques:
        keep &= a["technique"].isin(techniques)
    if hardware_keys:
        keep &= a["hardware_key"].isin(hardware_keys)
    young = pd.Series(True, index=a.index)
    if age != "all":
        since = db_alerts.utc(now or datetime.now(timezone.utc)) - timedelta(days=int(age))
        young = pd.Series([db_alerts.utc(t) >= since for t in a["run_started_at"]], index=a.index, dtype=bool)
    shown = a[keep & young].sort_values(["run_started_at", "id"], ascending=False)
    return shown, int((keep & ~young).sum())


def trends_params(r) -> dict:
    """The Trends view of an alert's series on its hardware."""
    return {"technique": r["technique"], "impl": r["impl"], "case": r["case_id"], "metric": r["metric"],
            "hw": r["hardware_key"]}


def compare_params(r, before: Optional[str]) -> Optional[dict]:
    """Compare of the run before the change against the change's run (None without a run before)."""
    return {"baseline": before, "candidate": r["run_id"]} if before else None
