"""One module per dashboard page; each is a Streamlit script (st.Page runs it top to bottom)."""
