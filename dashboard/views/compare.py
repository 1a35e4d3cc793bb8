"""Compare page: a baseline and a candidate (two runs, or all runs of two commits on one machine), series by series."""
import math

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from dashboard import data, plots, url_state, verdict
from db.escape import md_text

PER_PAGE = 60
st.header("Compare")
url = data.db_url()
runs = data.runs(url)
if runs.empty:
    data.empty_note("runs")
    st.stop()

labels = {r["run_id"]: data.run_label(r) for r in runs.to_dict("records")}
ids = list(labels)
commits = runs["git_commit"].fillna("").astype(str)


def resolve(ref):
    """A run id from a run id, a commit (or 7+ hex prefix) or a branch: the newest match, as the gate does."""
    if not ref or ref in labels:
        return ref
    hit = runs[(commits == ref) | (commits.str.startswith(ref) & (len(ref) >= 7)) | (runs["git_branch"] == ref)]
    return hit["run_id"].iloc[0] if len(hit) else ref


def commit_of(ref):
    """The full commit a commit (or 7+ hex prefix) or run id names, else ref unchanged."""
    if not ref:
        return ref
    hit = runs[(commits == ref) | (commits.str.startswith(ref) & (len(ref) >= 7)) | (runs["run_id"] == ref)]
    return hit["git_commit"].iloc[0] if len(hit) and hit["git_commit"].iloc[0] else ref


def default_pair(runs, candidate=None):
    """(candidate, baseline): two different runs. The candidate (given, else the newest run with an
    earlier run of its tier on its machine) against the newest such earlier run; failing that, the
    next run in the list, never the candidate against itself."""
    order = [candidate] if candidate else list(runs["run_id"])
    for rid in order:
        row = runs[runs["run_id"] == rid].iloc[0]
        same = runs[(runs["hardware_key"] == row["hardware_key"]) & (runs["tier"] == row["tier"])
                    & (runs["started_at"] < row["started_at"])]
        if len(same):
            return rid, same["run_id"].iloc[0]
    cand = candidate or runs["run_id"].iloc[0]
    others = [r for r in runs["run_id"] if r != cand]
    return cand, others[0] if others else cand


by = url_state.radio("compare", ["run", "commit"], "by", key="cmp_by", horizontal=True,
                     format_func={"run": "run against run",
                                  "commit": "commit against commit (every run of each on one machine)"}.get)
qp = st.query_params
if by == "run":
    for param in ("candidate", "baseline"):  # a commit or branch in a link names its newest run
        if qp.get(param) and "cmp_" + param[:4] not in st.session_state:
            qp[param] = resolve(qp[param])
    cand_default, base_default = default_pair(runs, qp.get("candidate") if qp.get("candidate") in labels else None)
    c1, c2 = st.columns(2)
    with c1:
        base_id = url_state.selectbox("baseline", ids, "baseline", key="cmp_base", format_func=labels.get,
                                      default=base_default)
    with c2:
        cand_id = url_state.selectbox("candidate", ids, "candidate", key="cmp_cand", format_func=labels.get,
                                      default=cand_default)
    base_runs, cand_runs = [base_id], [cand_id]
else:
    hw_names = runs.drop_duplicates("hardware_key").set_index("hardware_key")["hardware"].to_dict()
    hw = url_state.selectbox("machine", list(hw_names), "hw", key="cmp_hw", default=runs["hardware_key"].iloc[0],
                             format_func=lambda k: f"{hw_names[k]} ({k})")
    on_hw = runs[(runs["hardware_key"] == hw) & (runs["git_commit"].fillna("") != "")]
    per_commit = on_hw.groupby("git_commit", sort=False).agg(
        started_at=("started_at", "max"), n=("run_id", "size"), tiers=("tier", lambda t: ", ".join(sorted(set(t)))))
    per_commit = per_commit.sort_values("started_at", ascending=False)
    options = list(per_commit.index)
    if not options:
        st.info("No run on this machine names a commit.")
        st.stop()
    c_labels = {c: f"{c[:7]} · {pd.Timestamp(r.started_at).strftime('%Y-%m-%d %H:%M')} · {r.n} run"
                   f"{'s' if r.n > 1 else ''} ({r.tiers})" for c, r in per_commit.iterrows()}
    for param in ("candidate", "baseline"):
        if qp.get(param) and "cmp_" + param[:4] + "_commit" not in st.session_state:
            qp[param] = commit_of(qp[param])
    c1, c2 = st.columns(2)
    with c1:
        base_c = url_state.selectbox("baseline commit", options, "baseline", key="cmp_base_commit",
                                     default=options[1] if len(options) > 1 else options[0], format_func=c_labels.get)
    with c2:
        cand_c = url_state.selectbox("candidate commit", options, "candidate", key="cmp_cand_commit",
                                     default=options[0], format_func=c_labels.get)
    base_runs = list(on_hw[on_hw["git_commit"] == base_c]["run_id"])
    cand_runs = list(on_hw[on_hw["git_commit"] == cand_c]["run_id"])
    st.caption(f"Baseline: {len(base_runs)} run(s) of {base_c[:7]}, candidate: {len(cand_runs)} run(s) of "
               f"{cand_c[:7]} on {md_text(hw_names[hw])}. A series measured in several of a commit's runs is judged "
               "on their samples pooled; the nightly's files of one commit are read together.")


cmp = data.compared(url, tuple(base_runs), tuple(cand_runs))
techniques = sorted(set(cmp["technique"]))
chosen = url_state.multiselect("techniques (none: all)", techniques, "technique", key="cmp_tech")
if chosen:
    cmp = cmp[cmp["technique"].isin(chosen)].reset_index(drop=True)
if set(base_runs) == set(cand_runs):
    st.warning("Baseline and candidate are the same run(s): every series is stable by construction.")
by_id = runs.set_index("run_id")
b_env, c_env = by_id.loc[base_runs], by_id.loc[cand_runs]
if set(b_env["hardware_key"]) != set(c_env["hardware_key"]):
    st.info(f"Different hardware: {md_text(', '.join(sorted(set(b_env['hardware']))))} (baseline) vs "
            f"{md_text(', '.join(sorted(set(c_env['hardware']))))} (candidate). Two GPUs are described side by "
            "side here, not judged: no verdict, no regressions. The Hardware page sets each series against what "
            "the two GPUs' ceilings predict and tests quality metrics between them.")
    st.page_link("views/hardware.py", label="Hardware: GPU A beside GPU B")
    desc = cmp[["technique", "impl", "case_id", "metric", "unit", "baseline", "candidate"]].copy()
    desc["candidate / baseline"] = [c / b if isinstance(b, float) and isinstance(c, float) and b else None
                                    for b, c in zip(desc["baseline"], desc["candidate"])]
    for side in ("baseline", "candidate"):
        desc[side] = [verdict.fmt_value(v, m, u) for v, m, u in zip(desc[side], desc["metric"], desc["unit"])]
    st.caption(f"{len(desc)} series, values of each GPU (median) and their ratio.")
    st.dataframe(desc, hide_index=True, key="cmp_hw_table",
                 column_config={"candidate / baseline": st.column_config.NumberColumn(format="%.3f")})
    st.stop()
if set(b_env["software_key"]) != set(c_env["software_key"]):
    st.info(f"Software differs: {md_text('; '.join(sorted(set(b_env['software']))))} → "
            f"{md_text('; '.join(sorted(set(c_env['software']))))}")

for (b_proto, c_proto), n in verdict.protocol_mismatches(cmp).items():
    st.info(f"{n} series have no baseline under their timing protocol: the baseline measured them under "
            f"{md_text(b_proto)}, the candidate under {md_text(c_proto)}. Two protocols are never one series, "
            "so they are listed as missing baseline, not compared.")
counts = {k: n for i, (k, n) in enumerate(verdict.counts(cmp).items()) if n or i < 5}
cols = st.columns(len(counts))
for col, (status, n) in zip(cols, counts.items()):
    col.metric(status, n)
st.caption("Per series, with the gate's rules (db/verdict): timings by Mann-Whitney U on the two sides' samples "
           "(p < 0.01 and a median change >= 5 % in time, a rate's change read as the time per unit of work, "
           "beyond the series' run-to-run spread: its protocol's, or its own where runs of the same code showed it "
           "wider, learned from earlier runs (this database and the committed results); host-timer timings shown, not "
           "gated), errors against their stored tolerance or bound, quality fractions as k of n (Fisher's exact "
           "test, change >= 0.05, on n / phi trials where same-code runs scatter phi times the binomial variance); "
           "the metric's direction decides regressed or improved. A series' reason (table) says which spread "
           "judged it.")

statuses = [s for s in verdict.LABELS if s in set(cmp["label"])]
shown_status = url_state.multiselect("chart: statuses (none: all)", statuses, "status", key="cmp_status")
# "With a change": series the verdict judged changed (regressed or improved, gated or host-timer), not
# every series with a relative change (a stable series has one too).
changed = cmp["label"].str.startswith(("regressed", "improved"))
with_change = cmp[changed & cmp["rel_change"].notna() & (cmp["label"].isin(shown_status) if shown_status else True)]
pages = max(1, math.ceil(len(with_change) / PER_PAGE))
page = url_state.number("chart page", "page", 1, 1, pages, key="cmp_page") if pages > 1 else 1
shown = with_change.iloc[(page - 1) * PER_PAGE: page * PER_PAGE]
without = int(len(cmp) - changed.sum())
st.caption(f"Chart: series {(page - 1) * PER_PAGE + 1 if len(shown) else 0}–{(page - 1) * PER_PAGE + len(shown)} "
           f"of {len(with_change)} with a change" + (f" ({', '.join(shown_status)})" if shown_status else "") +
           f", worst first{f', {PER_PAGE} a page' if pages > 1 else ''}. {without} series judged stable or not "
           "compared (missing baseline, failures, no value) are only in the table.")
fig = go.Figure(go.Bar(
    x=shown["rel_change"] * 100, orientation="h",
    y=shown["impl"] + " / " + shown["case_id"] + " · " + shown["metric"],
    marker_color=[plots.STATUS_COLORS[s] for s in shown["label"]],
    customdata=shown[["status", "baseline", "candidate", "share_of_ceiling"]].to_numpy(),
    hovertemplate="%{x:+.2f} %<br>%{customdata[0]}<br>%{customdata[1]:.4g} → %{customdata[2]:.4g}"
                  "<br>candidate's share of ceiling %{customdata[3]}<extra></extra>"))
fig.update_layout(xaxis_title="candidate vs baseline, median change (%)", height=160 + 18 * len(shown),
                  yaxis=dict(autorange="reversed"), margin=dict(t=30, b=30))
st.plotly_chart(plots.inert(fig), key="compare_chart")
table = cmp.drop(columns=["benchmark_id"]).assign(
    baseline=[verdict.fmt_value(v, m, u) for v, m, u in zip(cmp["baseline"], cmp["metric"], cmp["unit"])],
    candidate=[verdict.fmt_value(v, m, u) for v, m, u in zip(cmp["candidate"], cmp["metric"], cmp["unit"])])
st.dataframe(table, hide_index=True,
             column_config={"rel_change": st.column_config.NumberColumn(format="percent"),
                            "p_value": st.column_config.NumberColumn(format="%.2g")})
