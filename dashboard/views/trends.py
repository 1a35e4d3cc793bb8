"""Trends page: any series over time or commits, samples' spread, change points and acknowledgements."""
import pandas as pd
import streamlit as st

from dashboard import data, plots, trend_chart, url_state, writes
from db.escape import md_text
from db.noise import resolution


def noise_table(points: pd.DataFrame) -> pd.DataFrame:
    """Per impl x hardware x protocol: reference nights, night CV (sd / mean) and the smallest step the
    detector finds within 2 nights (db.noise.resolution)."""
    rows = []
    ok = points[points["status"] == "ok"].sort_values("started_at")
    for (impl, hw, proto), g in ok.groupby(["impl", "hardware", "protocol"], dropna=False):
        r = resolution(list(g["value"]))
        if r["nights"] >= 3:
            rows.append({"impl": impl, "hardware": hw, "protocol": proto, "nights": r["nights"],
                         "night CV": r["night_cv"], "smallest step found": r["resolvable_step"],
                         "too noisy": r["too_noisy"]})
    return pd.DataFrame(rows, columns=["impl", "hardware", "protocol", "nights", "night CV", "smallest step found",
                                       "too noisy"])

st.header("Trends")
url = data.db_url()
cat = data.catalog(url)
if cat.empty:
    data.empty_note("results")
    st.stop()
c1, c2, c3 = st.columns(3)
with c1:
    technique = url_state.selectbox("technique", sorted(cat["technique"].unique()), "technique",
                                    key="trend_technique")
t_cat = cat[cat["technique"] == technique]
with c2:
    impls_all = sorted(t_cat["impl"].unique())
    impls = url_state.multiselect("implementations (none: all)", impls_all, "impl", default=impls_all[:1],
                                  key="trend_impl")
i_cat = t_cat[t_cat["impl"].isin(impls)] if impls else t_cat
with c3:
    case = url_state.selectbox("case", sorted(i_cat["case_id"].unique()), "case", key="trend_case")
c_cat = i_cat[i_cat["case_id"] == case]
metrics = sorted(c_cat["metric"].unique())
runs = data.runs(url)
hw_names = runs.drop_duplicates("hardware_key").set_index("hardware_key")["hardware"].to_dict()
sw_names = runs.drop_duplicates("software_key").set_index("software_key")["software"].to_dict()

c4, c5, c6 = st.columns(3)
with c4:
    metric = url_state.selectbox("metric", metrics, "metric", key="trend_metric",
                                 default="latency_ms" if "latency_ms" in metrics else None)
with c5:
    hws = url_state.multiselect("hardware (none: all)", list(hw_names), "hw", key="trend_hw",
                                format_func=lambda k: f"{hw_names[k]} ({k})")
with c6:
    sws = url_state.multiselect("software version (none: all)", list(sw_names), "sw", key="trend_sw",
                                format_func=lambda k: f"{sw_names[k]} ({k})")

c7, c8, c9 = st.columns(3)
with c7:
    x = url_state.radio("x axis", list(trend_chart.X_AXES), "x", horizontal=True, key="trend_x",
                        format_func=trend_chart.X_AXES.get)
with c8:
    if st.query_params.get("group") in trend_chart.GROUP_ALIASES and "trend_group" not in st.session_state:
        st.query_params["group"] = trend_chart.GROUP_ALIASES[st.query_params["group"]]
    split = url_state.selectbox("one line per (and protocol)", list(trend_chart.SPLITS), "group", key="trend_group")
with c9:
    tier = url_state.selectbox("tier", ["all"] + sorted(runs["tier"].unique()), "tier", key="trend_tier")
log_y = url_state.toggle("log y", "log", default=metric in ("rel_err",) or str(metric).startswith("ulp"),
                         key="trend_log")

sel = c_cat[c_cat["metric"] == metric]
points = data.series_points(url, tuple(int(i) for i in sel["benchmark_id"]), metric, tuple(hws), tuple(sws),
                            None if tier == "all" else tier)
if points.empty:
    st.info("No results for this selection.")
    st.stop()
points = trend_chart.prepare(plots.with_spread(points), split)
lines, n_lines = trend_chart.pick_lines(points)
if n_lines > len(lines):
    st.info(f"{n_lines} lines (implementation × hardware × protocol): showing the {len(lines)} with the newest "
            "results. Choose implementations or hardware above to see the others.")
protocols = sorted(points["protocol"].unique())
if len(protocols) > 1:
    st.caption(f"{len(protocols)} timing protocols ({md_text(', '.join(protocols))}) are drawn as separate lines: "
               "a protocol change is a new series, not a speed-up.")
cps = pd.concat([data.change_points(url, technique, i, case, metric) for i in sel["impl"]], ignore_index=True)
acks = pd.concat([data.acknowledgements(url, technique, i, case, metric) for i in sel["impl"]],
                 ignore_index=True)
if hws:
    cps = cps[cps["hardware_key"].isin(hws)]
    acks = acks[acks["hardware_key"].isin(hws)]
unit = str(sel["unit"].iloc[0]) if len(sel) else ""
direction = str(sel["direction"].iloc[0]) if len(sel) else ""
st.caption(f"{md_text(technique)} / {md_text(', '.join(sel['impl']))} / {md_text(case)} · {md_text(metric)} "
           f"({md_text(unit)}, {direction} is better) · "
           f"marker: median of the run's samples, bar: 10th-90th percentile · {len(points)} results · "
           f"{len(cps)} change points · {len(acks)} acknowledgements")
fig = trend_chart.trend_figure(points, x=x, metric=metric, unit=unit, lines=lines, change_points=cps, acks=acks,
                               log_y=log_y)
if any(getattr(sh, "name", None) == "gate threshold" for sh in fig.layout.shapes):
    st.caption(f"Shaded: each line's night-to-night spread (median ± 1 sd of its last {trend_chart.REFERENCE_RUNS} "
               "runs); dotted: the gate's threshold around their median (a change beyond it, significant, alerts).")
names = [t.name for t in fig.data]  # before inert escapes them: the clicked trace's line
event = st.plotly_chart(plots.inert(fig), key="trend_chart", on_select="rerun", selection_mode="points")
clicked = [p for p in (event.selection.points if event else []) if p.get("customdata")]
if clicked:
    p = clicked[0]
    link = trend_chart.compare_link(points, names[p["curve_number"]], p["customdata"][8], x)
    if link:
        st.page_link("views/compare.py", query_params=link,
                     label=f"Compare {'commit' if x == 'commit' else 'run'} {md_text(p['customdata'][1])} "
                           f"({p['customdata'][0]}) against the one before it on this line")
    else:
        st.caption("The clicked point is its line's first: nothing before it to compare with.")
else:
    st.caption("Click a point to compare its run (its commit, on the commit axis) with the one before it.")
if metric == "latency_ms":
    res = noise_table(points)
    noisy = res[res["too noisy"]]
    if not noisy.empty:
        named = ", ".join(f"{i} · {h} · {trend_chart.short_protocol(p)}: {r:.0%}" for i, h, p, r in
                          zip(noisy["impl"], noisy["hardware"], noisy["protocol"], noisy["smallest step found"]))
        st.warning(f"{len(noisy)} of {len(res)} lines scatter too much night to night for a 5 % change to be "
                   f"found within 2 nights ({md_text(named)}): measure them more quietly before trusting a quiet "
                   "history.")
    with st.expander("detector resolution (each line's reference nights: since its last change, at most 60)"):
        st.dataframe(res, hide_index=True, column_config={
            "night CV": st.column_config.NumberColumn(format="percent"),
            "smallest step found": st.column_config.NumberColumn(format="percent")})
with st.expander("results"):
    st.dataframe(points[["started_at", "commit", "tier", "impl", "kernel", "hardware", "software", "protocol",
                         "status", "median", "p10", "p90", "n", "run_id"]], hide_index=True)
if not cps.empty or not acks.empty:
    with st.expander("change points and acknowledgements"):
        st.dataframe(cps, hide_index=True)
        st.dataframe(acks, hide_index=True)
        writes.ack_form(cps, key="trend_ack")
