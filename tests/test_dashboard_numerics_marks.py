"""Numerics heat maps on the committed H200 exponent sweep: the x ("no finite output") sits exactly on the
cells whose rows failed, for every scheme and metric, and on none of the fine cells."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from tests.conftest import ROOT
from tests.test_dashboard_pages import arr, ingest, run_page

SWEEP = ROOT / "results" / "h200" / "gemm_fp32_emulation_sweep_nightly.json.gz"
SCHEMES = ["cublas_fp32", "triton_bf16x3", "triton_bf16x6", "triton_dot_ieee"]


def failed_cells(doc: dict, impl: str, metric: str) -> set[tuple[int, int]]:
    """(exp_a, exp_b) of the file's non-ok rows of impl/metric, from the file itself."""
    return {(r["params"]["exp_a"], r["params"]["exp_b"]) for r in doc["results"]
            if r["impl"] == impl and r["metric"] == metric and "exp_a" in r["params"] and r["status"] != "ok"}


@pytest.fixture(scope="module")
def sweep_url(tmp_path_factory) -> tuple[str, dict]:
    from db.validate import load_and_validate

    doc = load_and_validate(str(SWEEP))
    url = f"sqlite:///{tmp_path_factory.mktemp('numerics') / 'sweep.db'}"
    ingest(url, [(str(SWEEP), doc)])
    return url, doc


def marked(fig: dict) -> set[tuple[float, float]]:
    """(exp_a, exp_b) of the cells that carry an x in a heat map figure."""
    ticks_x, ticks_y = fig["layout"]["xaxis"]["ticktext"], fig["layout"]["yaxis"]["ticktext"]
    trace = next((t for t in fig["data"] if t.get("name") == "non-finite / failed"), None)
    if trace is None:
        return set()
    return {(float(ticks_y[int(y)]), float(ticks_x[int(x)])) for x, y in zip(arr(trace["x"]), arr(trace["y"]))}


@pytest.mark.parametrize("metric", ["rel_err", "rel_err_vs_fp32", "within_fp32"])
def test_marks_only_on_failed_cells(sweep_url, metric, monkeypatch):
    url, doc = sweep_url
    at = run_page(url, "numerics", monkeypatch)
    at.radio(key="num_metric").set_value(metric).run()
    at.multiselect(key="num_schemes").set_value(SCHEMES).run()
    assert not at.exception, [e.value for e in at.exception]
    figs = {f["layout"]["title"]["text"]: f for f in (json.loads(c.proto.spec) for c in at.get("plotly_chart"))}
    for impl in SCHEMES:
        want = failed_cells(doc, impl, metric)
        got = marked(figs[impl])
        assert got == {(float(a), float(b)) for a, b in want}, (impl, metric, len(got), len(want))
        # every cell with an ok row shows its value (text), a marked one none
        ok = {(r["params"]["exp_a"], r["params"]["exp_b"]) for r in doc["results"]
              if r["impl"] == impl and r["metric"] == metric and "exp_a" in r["params"] and r["status"] == "ok"}
        text = np.asarray(figs[impl]["data"][0]["text"])
        assert text.shape == (13, 13) and int((text != "").sum()) == len(ok) and not ok & want
    if metric == "rel_err":
        # on the H200, 126 of BF16x6's 169 cells have a finite output
        assert len(marked(figs["triton_bf16x6"])) == 43
        assert (0.0, 0.0) not in marked(figs["cublas_fp32"])


def test_heatmap_marks_ignore_cells_a_pivot_left_empty():
    """marks with NaN holes (a pivot over the failed rows only) mark only their True cells."""
    from dashboard.plots import heatmap

    grid = pd.DataFrame(np.ones((3, 3)), index=[-1, 0, 1], columns=[-1, 0, 1])
    marks = pd.DataFrame([[True, np.nan], [np.nan, True]], index=[-1, 1], columns=[-1, 1])
    fig = heatmap(grid, "t", "x", "y", "z", marks=marks)
    trace = next(t for t in fig.data if t.name == "non-finite / failed")
    assert sorted(zip(trace.y, trace.x)) == [(0, 0), (2, 2)]
