"""Hardware page: one commit on GPU A beside GPU B (db/hardware.py): quality differences as alerts,
then every series against what the two GPUs' ceilings predict, flagged series first."""
import math

import pandas as pd
import streamlit as st
from sqlalchemy.orm import sessionmaker

from dashboard import data, url_state
from db import hardware, queries
from db.escape import md_text

NEWEST = "newest shared (else each GPU's newest)"


@st.cache_data(ttl=data.TTL, show_spinner=False)
def gpu_runs(url: str) -> dict:
    """{GPU: [(run, commit, started)]} of the nightly tier."""
    with sessionmaker(bind=queries.read_engine(url))() as s:
        return hardware.gpu_runs(s)


@st.cache_data(ttl=data.TTL, show_spinner="Reading both runs…")
def compared(url: str, gpu_a: str, gpu_b: str, commit) -> hardware.HardwareComparison:
    """db.hardware.load on the dashboard's read-only engine (the GPUs' runs as the page read them)."""
    with sessionmaker(bind=queries.read_engine(url))() as s:
        return hardware.load(s, gpu_a, gpu_b, commit, runs=gpu_runs(url))


st.header("Hardware")
url = data.db_url()
by_gpu = gpu_runs(url)
gpus = sorted(by_gpu)
if len(gpus) < 2:
    st.info(f"Nightly runs on two GPUs are needed; stored: {md_text(', '.join(gpus) or 'none')}.")
    st.stop()
c1, c2, c3 = st.columns(3)
with c1:
    gpu_a = url_state.selectbox("GPU A", gpus, "gpu_a", key="hw_a", default=gpus[0])
with c2:
    gpu_b = url_state.selectbox("GPU B", [g for g in gpus if g != gpu_a], "gpu_b", key="hw_b")
shared = [c for c in dict.fromkeys(r[1] for r in by_gpu[gpu_a]) if c and c in {r[1] for r in by_gpu[gpu_b]}]
with c3:
    commit = url_state.selectbox("commit", [NEWEST] + shared, "commit", key="hw_commit", default=NEWEST,
                                 format_func=lambda c: c if c == NEWEST else c[:7])
c = compared(url, gpu_a, gpu_b, None if commit == NEWEST else commit)
st.caption(f"A: {md_text(c.gpu_a)} (run {c.run_a[:12]}, {c.commit_a[:7]}) · B: {md_text(c.gpu_b)} "
           f"(run {c.run_b[:12]}, {c.commit_b[:7]}) · {md_text(c.caption)}")
st.dataframe(pd.DataFrame([{"ceiling": k, "A": a, "B": b, "B over A": round(r, 3)} for k, (a, b, r) in c.ceilings.items()]),
             hide_index=True, key="hw_ceilings")

st.subheader("Quality: the count test between the GPUs")
if c.alerts:
    st.error(f"{len(c.alerts)} quality series differ between the GPUs (same test as between commits: "
             "Fisher's exact on k of n, p < 0.01 and >= 0.05 absolute; or a status that differs).")
    for r in c.alerts:
        st.markdown(f"- **{md_text(r['technique'])} / {md_text(r['impl'])} / {md_text(r['case'])} · "
                    f"{md_text(r['metric'])}**: {md_text(r['why'])}")
else:
    st.success(f"No quality difference: {len(c.quality)} quality series agree between the GPUs.")
q = pd.DataFrame(c.quality)
if not q.empty:
    q["A"] = [f"{k}/{n}" if k is not None and not (isinstance(k, float) and math.isnan(k)) else a
              for k, n, a in zip(q["k_a"], q["n_a"], q["a"])]
    q["B"] = [f"{k}/{n}" if k is not None and not (isinstance(k, float) and math.isnan(k)) else b
              for k, n, b in zip(q["k_b"], q["n_b"], q["b"])]
    st.dataframe(q[["alert", "technique", "impl", "case", "metric", "A", "B", "status_a", "status_b", "why"]]
                 .astype({"A": str, "B": str}), hide_index=True, key="hw_quality")

st.subheader("Speed: B over A against the ceilings' prediction")
st.caption(f"{len(c.flagged)} of {len(c.speed)} series move against the prediction beyond their noise (listed "
           "first): B's speed over A's (time ratio for timings, rate ratio for rates) with its 95 % interval "
           "(both runs' samples and a GPU's night-to-night spread, db/verdict), against the ratio of the two GPUs' "
           "ceilings the series is bound by (datasheet peaks where both GPUs are known; copy bandwidth for "
           "memory-bound work, the GEMM rate of its dtype for compute-bound). Shares are of each GPU's own ceiling; above 100 % is marked.")
s = pd.DataFrame(c.speed)
if not s.empty:
    for side in ("share_a", "share_b"):
        s[side] = [None if v is None or v != v else f"{v:.0%}" + (" (>100 %)" if v > 1 else "") for v in s[side]]
    st.dataframe(s[["note", "technique", "impl", "case", "metric", "a", "b", "share_a", "share_b", "speed",
                    "speed_lo", "speed_hi", "bound_by", "predicted", "vs_predicted"]],
                 hide_index=True, key="hw_speed",
                 column_config={k: st.column_config.NumberColumn(format="%.3f")
                                for k in ("speed", "speed_lo", "speed_hi", "predicted", "vs_predicted")})
