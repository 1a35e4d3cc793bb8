"""Trends on the committed H200 history of exp_approx (17 repeats under protocol v1, 17 under v2, 29 under
v3, a kernel-hash change at the layout re-key): lines never join protocols, implementations or hardware,
repeats of a commit collapse, labels and axes read clearly."""
from __future__ import annotations

import json
from glob import glob

import numpy as np
import pandas as pd
import pytest

from tests.conftest import ROOT
from tests.test_dashboard_pages import arr, ingest, run_page

FILES = [p for pat in ("results/h200/repeats*/*.json.gz", "results/h200/layout_v2/*.json.gz",
                       "results/h200/protocol_v2/v2_exp_approx.json.gz", "results/h200/exp_approx*.json.gz")
         for p in sorted(glob(str(ROOT / pat)))]
MUFU = {"technique": "exp_approx", "impl": "triton_mufu", "case": "elem_n16m", "metric": "latency_ms"}


@pytest.fixture(scope="module")
def history_url(tmp_path_factory) -> str:
    from db.validate import load_and_validate

    url = f"sqlite:///{tmp_path_factory.mktemp('trends') / 'history.db'}"
    ingest(url, [(p, load_and_validate(p)) for p in FILES])
    return url


def lines_of(at) -> list[dict]:
    """The chart's data lines (not the version-change marks, failures or change points)."""
    fig = json.loads(at.get("plotly_chart")[0].proto.spec)
    return [t for t in fig["data"] if t.get("mode") == "lines+markers"]


def figure(at) -> dict:
    return json.loads(at.get("plotly_chart")[0].proto.spec)


def column(trace: dict, i: int) -> list:
    return [row[i] for row in trace["customdata"]]


def test_protocols_are_separate_lines(history_url, monkeypatch):
    at = run_page(history_url, "trends", monkeypatch, MUFU)
    lines = lines_of(at)
    protocols = [set(column(t, 2)) for t in lines]
    assert all(len(p) == 1 for p in protocols)  # no line holds two protocols
    assert sorted(p.pop()[-8:] for p in protocols) == ["graph/v1", "graph/v2", "graph/v3"]
    assert any("separate lines" in c.value for c in at.caption)


def test_cleared_implementation_filter_caps_lines_per_implementation(history_url, monkeypatch):
    at = run_page(history_url, "trends", monkeypatch, MUFU)
    at.multiselect(key="trend_impl").set_value([]).run()
    assert not at.exception
    lines = lines_of(at)
    assert 2 <= len(lines) <= 8
    impls = [t["name"].split(" · ")[0] for t in lines]
    assert len(set(impls)) == len(impls)  # v3 only (the newest): one line per implementation
    assert any("36 lines" in i.value and "showing the 8" in i.value for i in at.info)


def test_two_hardware_labels_are_two_lines(history_url, monkeypatch):
    """A second GPU's runs of the same implementation are a line of their own, never joined."""
    from db.validate import load_and_validate

    doc = load_and_validate(FILES[0])
    doc["run"]["id"] = "b" * 32
    env = doc["run"].get("environment") or doc["run"].get("env")
    env["gpu_name"] = "NVIDIA B200"
    url = history_url.replace("history.db", "history2.db")
    import shutil

    shutil.copy(history_url.removeprefix("sqlite:///"), url.removeprefix("sqlite:///"))
    ingest(url, [("b200", doc)])
    at = run_page(url, "trends", monkeypatch, MUFU | {"impl": "triton_mufu,torch_eager"})
    names = [t["name"] for t in lines_of(at)]
    assert len(names) == 8  # 2 implementations x (H200 at 3 protocols + B200 at 1)
    assert any("B200" in n for n in names) and any("H200" in n for n in names)
    assert all(("B200" in n) != ("H200" in n) for n in names)


def test_commit_axis_collapses_repeats_to_median_and_range(history_url, monkeypatch):
    from dashboard.plots import spread
    from db import queries

    at = run_page(history_url, "trends", monkeypatch, MUFU)
    at.radio(key="trend_x").set_value("commit").run()
    assert not at.exception
    cat = queries.catalog(history_url)
    ids = cat[(cat.technique == "exp_approx") & (cat.impl == "triton_mufu") & (cat.case_id == "elem_n16m")
              & (cat.metric == "latency_ms")]["benchmark_id"]
    pts = queries.series_points(history_url, tuple(int(i) for i in ids), "latency_ms")
    pts = pts[pts["status"] == "ok"]
    pts["med"] = [spread(s, v)[0] for s, v in zip(pts["samples"], pts["value"])]
    pts["c7"] = [c[:7] if isinstance(c, str) and c else "none" for c in pts["git_commit"]]
    for t in lines_of(at):
        xs = list(t["x"])
        assert len(xs) == len(set(xs))  # one point per commit
        proto = column(t, 2)[0]
        for commit, y, lo, hi, runs in zip(xs, arr(t["y"]), column(t, 4), column(t, 5), column(t, 6)):
            g = pts[(pts["c7"] == commit) & (pts["protocol"] == proto)]
            assert int(runs) == len(g), (commit, proto, t["name"])
            assert y == pytest.approx(float(np.median(g["med"])))
            if len(g) > 1:
                assert (float(lo), float(hi)) == pytest.approx((g["med"].min(), g["med"].max()))
    assert max(int(r) for t in lines_of(at) for r in column(t, 6)) == 19  # the 19 v3 repeats of ed9c4f3


def test_run_order_axis_and_hover(history_url, monkeypatch):
    at = run_page(history_url, "trends", monkeypatch, MUFU)
    at.radio(key="trend_x").set_value("order").run()
    assert not at.exception
    fig = figure(at)
    assert fig["layout"]["xaxis"]["title"]["text"] == "run order"
    t = lines_of(at)[0]
    for word in ("commit", "protocol", "kernel", "p10–p90"):
        assert word in t["hovertemplate"]
    when = pd.Timestamp(column(t, 0)[0])
    assert when.year == 2026  # a date, not a run id
    assert all(len(k) == 7 for k in column(t, 3))  # the kernel's impl_hash, short


def test_kernel_version_change_is_marked_old_to_new(history_url, monkeypatch):
    """The layout re-key changed triton_mufu's kernel hash on v3: marked where it changes, old -> new."""
    from db import queries

    at = run_page(history_url, "trends", monkeypatch, MUFU)
    fig = figure(at)
    v3 = next(t for t in fig["data"] if t.get("name", "").endswith("graph/v3: version changes"))
    cat = queries.catalog(history_url)
    ids = cat[(cat.technique == "exp_approx") & (cat.impl == "triton_mufu") & (cat.case_id == "elem_n16m")
              & (cat.metric == "latency_ms")]["benchmark_id"]
    pts = queries.series_points(history_url, tuple(int(i) for i in ids), "latency_ms")
    pts = pts[(pts["status"] == "ok") & (pts["protocol"] == "cuda-events+l2flush+graph/v3")]
    hashes = [h[:7] for h in pts.sort_values(["started_at", "run_id"])["impl_hash"]]
    want = [f"kernel {a} → {b}" for a, b in zip(hashes, hashes[1:]) if a != b]
    assert want and list(v3["hovertext"]) == want


def test_axis_titles_and_colours():
    from dashboard.plots import PALETTE
    from dashboard.trend_chart import axis_title

    assert axis_title("rel_err", "1") == "rel_err"
    assert axis_title("latency_ms", "ms") == "latency_ms"
    assert axis_title("tflops", "TFLOP/s") == "tflops (TFLOP/s)"
    rgb = [tuple(int(c[i:i + 2], 16) for i in (1, 3, 5)) for c in PALETTE[:8]]
    # the first colours differ in hue family: no two of the first four are both blue-dominant
    blue = [b > r and b > g for r, g, b in rgb[:4]]
    assert sum(blue) == 1
    assert len(set(PALETTE)) == len(PALETTE)


def test_trace_colours_distinct_on_page(history_url, monkeypatch):
    at = run_page(history_url, "trends", monkeypatch, MUFU)
    at.multiselect(key="trend_impl").set_value(["triton_mufu", "torch_eager", "triton_poly3"]).run()
    colours = [t["line"]["color"] for t in lines_of(at)]
    assert len(colours) == len(set(colours)) >= 3


def test_change_point_labels_never_overlap():
    from dashboard.trend_chart import label_levels, prepare, trend_figure
    from dashboard.plots import with_spread

    t0 = pd.Timestamp("2026-11-29 10:00", tz="UTC")
    rows = [{"run_id": f"r{i}", "started_at": t0 + pd.Timedelta(minutes=i), "git_commit": f"{i:07x}",
             "status": "ok", "value": 1.0 + i / 100, "samples": [1.0], "impl": "k", "hardware": "H200",
             "software": "s", "protocol": "p/v3", "impl_hash": "abcdef0"} for i in range(40)]
    pts = prepare(with_spread(pd.DataFrame(rows)))
    cps = pd.DataFrame([{"run_id": f"r{i}", "run_started_at": t0 + pd.Timedelta(minutes=i), "kind": "regression",
                         "rel_change": 0.05} for i in (10, 11, 12, 30)])
    for x in ("started_at", "commit", "order"):
        fig = trend_figure(pts, x=x, metric="latency_ms", unit="ms", change_points=cps)
        ann = fig.layout.annotations
        assert len(ann) == 4
        assert len({a.y for a in ann[:3]}) == 3  # three close labels on three rows
        assert ann[3].y == ann[0].y  # a far one shares the first row
    assert label_levels([0.0, 0.05, 0.5, 0.55, 0.2], 0.12) == [0, 1, 0, 1, 0]


def test_mqar_context_axis_ticks_at_lengths(tmp_path, monkeypatch):
    from db.validate import load_and_validate

    url = f"sqlite:///{tmp_path / 'mqar.db'}"
    path = str(ROOT / "results/h200/mqar_h200.json")
    ingest(url, [(path, load_and_validate(path))])
    at = run_page(url, "retrieval", monkeypatch)
    fig = next(f for f in (json.loads(c.proto.spec) for c in at.get("plotly_chart"))
               if f["layout"]["xaxis"].get("type") == "log")
    ticks = fig["layout"]["xaxis"]["ticktext"]
    assert ticks and all(t.isdigit() for t in ticks)  # '512', '4096': no minor digits
    assert fig["layout"]["xaxis"]["tickvals"] == sorted(float(t) for t in ticks)
    colours = [t["line"]["color"] for t in fig["data"] if t.get("mode") == "lines+markers"]
    assert len(colours) == len(set(colours))


def test_trends_permalink_round_trip(history_url, monkeypatch):
    """Every Trends widget is written to the URL; the copied link opens the same view."""
    from tests.test_dashboard_url_state import open_link

    at = open_link(history_url, "trends", monkeypatch, MUFU)
    at.multiselect(key="trend_impl").set_value(["triton_mufu", "torch_eager"]).run()
    at.radio(key="trend_x").set_value("commit").run()
    at.selectbox(key="trend_group").set_value("impl · hardware · kernel version").run()
    at.selectbox(key="trend_tier").set_value("nightly").run()
    at.toggle(key="trend_log").set_value(True).run()
    hw = at.multiselect(key="trend_hw").options[0]
    at.multiselect(key="trend_hw").set_value([hw]).run()
    link = {k: at.query_params.get_all(k) if hasattr(at.query_params, "get_all") else at.query_params[k]
            for k in at.query_params}
    for param in ("technique", "impl", "case", "metric", "hw", "x", "group", "tier", "log"):
        assert param in link, param
    spec = at.get("plotly_chart")[0].proto.spec
    again = open_link(history_url, "trends", monkeypatch, link)
    assert not [w.value for w in again.warning if "link" in w.value]
    assert again.multiselect(key="trend_impl").value == ["torch_eager", "triton_mufu"]
    assert again.radio(key="trend_x").value == "commit"
    assert again.selectbox(key="trend_group").value == "impl · hardware · kernel version"
    assert again.selectbox(key="trend_tier").value == "nightly" and again.toggle(key="trend_log").value
    assert len(again.multiselect(key="trend_hw").value) == 1
    assert again.get("plotly_chart")[0].proto.spec == spec


def test_trends_bad_link_value_warns(history_url, monkeypatch):
    from tests.test_dashboard_url_state import open_link

    at = open_link(history_url, "trends", monkeypatch, MUFU | {"x": "bogus", "case": "nope"})
    text = " ".join(w.value for w in at.warning)
    assert "bogus" in text and "nope" in text
    assert at.radio(key="trend_x").value == "started_at"


def test_clicked_point_links_to_compare_with_the_run_before(history_url):
    from dashboard.plots import with_spread
    from dashboard.trend_chart import compare_link, prepare
    from db import queries

    cat = queries.catalog(history_url)
    ids = cat[(cat.technique == "exp_approx") & (cat.impl == "triton_mufu") & (cat.case_id == "elem_n16m")
              & (cat.metric == "latency_ms")]["benchmark_id"]
    pts = prepare(with_spread(queries.series_points(history_url, tuple(int(i) for i in ids), "latency_ms")))
    v3 = pts[pts["protocol"] == "cuda-events+l2flush+graph/v3"].sort_values(["started_at", "run_id"])
    line = v3["line"].iloc[0]
    runs = list(v3["run_id"])
    assert compare_link(pts, line, runs[5], "started_at") == {"baseline": runs[4], "candidate": runs[5]}
    assert compare_link(pts, line, runs[0], "order") is None  # the line's first point
    last = v3.iloc[-1]
    commits = list(dict.fromkeys(v3["git_commit"]))
    link = compare_link(pts, line, last["run_id"], "commit")
    assert link == {"by": "commit", "hw": last["hardware_key"], "baseline": commits[-2], "candidate": commits[-1]}
    # the v2 line's runs are not the v3 line's: a point is compared within its own line
    v2_line = pts[pts["protocol"] == "cuda-events+l2flush+graph/v2"]["line"].iloc[0]
    assert compare_link(pts, v2_line, runs[5], "started_at") is None


def test_trends_offers_the_click(history_url, monkeypatch):
    at = run_page(history_url, "trends", monkeypatch, MUFU)
    assert any("Click a point to compare" in c.value for c in at.caption)


def test_old_group_links_keep_working(history_url, monkeypatch):
    from tests.test_dashboard_url_state import open_link

    at = open_link(history_url, "trends", monkeypatch, MUFU | {"group": "impl version"})
    assert at.selectbox(key="trend_group").value == "impl · hardware · kernel version"
    assert not [w.value for w in at.warning if "link" in w.value]


def test_noise_band_and_gate_threshold_drawn(history_url, monkeypatch):
    from dashboard.trend_chart import REFERENCE_RUNS

    at = run_page(history_url, "trends", monkeypatch, MUFU | {"x": "order"})
    fig = figure(at)
    gates = [s for s in fig["layout"]["shapes"] if s.get("name") == "gate threshold"]
    bands = [s for s in fig["layout"]["shapes"] if s.get("name") == "night-to-night spread"]
    assert len(gates) == 2 * len(bands) == 6  # three protocol lines, each band and both thresholds
    v3 = next(t for t in lines_of(at) if t["name"].endswith("graph/v3"))
    ref = float(np.median(arr(v3["y"])[-REFERENCE_RUNS:]))
    lo, hi = sorted(s["y0"] for s in gates if s["line"]["color"] == v3["line"]["color"])
    assert (lo, hi) == pytest.approx((ref * 0.95, ref * 1.05))
    assert any("gate's threshold" in c.value for c in at.caption)
    at.multiselect(key="trend_impl").set_value([]).run()  # 8 lines: no bands
    assert not [s for s in figure(at)["layout"].get("shapes", []) if s.get("name") == "gate threshold"]
