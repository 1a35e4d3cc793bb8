"""KernelWatch dashboard entry: `kwatch dashboard` runs `streamlit run dashboard/app.py` with $KWATCH_DB set."""
import logging
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # streamlit puts only dashboard/ on the path
    sys.path.insert(0, str(ROOT))

import streamlit as st  # noqa: E402

from dashboard import url_state  # noqa: E402
from dashboard.data import db_url  # noqa: E402
from db.errors import page_message  # noqa: E402
from db.urls import ScrubFilter, mask_url  # noqa: E402

LOG = logging.getLogger("kwatch.dashboard")
if not any(isinstance(f, ScrubFilter) for f in LOG.filters):  # the app script runs on every rerun
    LOG.addFilter(ScrubFilter())

PAGES = [
    st.Page("views/health.py", title="Health", url_path="health", default=True),
    st.Page("views/alerts.py", title="Alerts", url_path="alerts"),
    st.Page("views/trends.py", title="Trends", url_path="trends"),
    st.Page("views/compare.py", title="Compare", url_path="compare"),
    st.Page("views/hardware.py", title="Hardware", url_path="hardware"),
    st.Page("views/runs.py", title="Runs", url_path="runs"),
    st.Page("views/numerics.py", title="Numerics", url_path="numerics"),
    st.Page("views/retrieval.py", title="Retrieval", url_path="retrieval"),
    st.Page("views/claims.py", title="Claims", url_path="claims"),
    st.Page("views/cost_model.py", title="Cost model", url_path="cost-model"),
]

st.set_page_config(page_title="KernelWatch", layout="wide")
page = st.navigation(PAGES)
st.sidebar.caption(f"database: `{mask_url(db_url())}` (read-only)")
url_state.check_names(page.url_path)
try:
    page.run()
except Exception as exc:  # one line in the page (no server paths, no traceback), the details in the server log
    LOG.exception("page %s failed", page.title)
    st.error(page_message(exc))
