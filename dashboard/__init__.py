"""KernelWatch dashboard (Streamlit + Plotly); reads the database through db/ queries only."""
