"""Claims page: every claim beside what we reproduced (the ledger comes from db.claims)."""
import importlib.util

import streamlit as st

url = __import__("dashboard.data", fromlist=["db_url"]).db_url()
st.header("Claims")
if importlib.util.find_spec("db.claims") is None:
    st.info("The claims ledger (db.claims) is not installed in this checkout yet.")
    st.stop()
