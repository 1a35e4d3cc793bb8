"""Hardware view (db/hardware.py, `kwatch hardware`): a committed H200 nightly beside the same run on a
second GPU, on SQLite and PostgreSQL."""
from __future__ import annotations

import json

import pytest

from db.engine import open_db
from db.hardware import compare, load, pick
from tests.conftest import kwatch
from tests.hardware_fixtures import H100, as_h100, h200_doc
from tests.test_dashboard_pages import ingest


@pytest.fixture(scope="module")
def docs():
    h200 = h200_doc()
    return h200, as_h100(h200)


def test_quality_difference_is_an_alert_and_nothing_else(docs):
    h200, h100 = docs
    c = compare(h100, h200)
    assert c.gpu_a == H100 and c.gpu_b == "NVIDIA H200" and c.caption.startswith("one commit")
    got = {(a["impl"], a["case"], a["metric"]) for a in c.alerts}
    assert got == {("triton_zeta_morton", "ctx64k/grid", "recall"), ("triton_zeta_morton", "ctx64k/grid", "retrieval")}
    zeta = next(a for a in c.alerts if a["metric"] == "recall")
    assert (zeta["k_a"], zeta["n_a"], zeta["k_b"], zeta["n_b"]) == (0, 33, 33, 33) and "B higher" in zeta["why"]
    assert not compare(h200, h200).alerts  # one run against itself: no difference


def test_memory_bound_series_against_the_copy_ratio_flagged_first(docs):
    h200, h100 = docs
    c = compare(h100, h200)
    # the prediction takes both GPUs' datasheet peaks, not the rows' recorded ceilings (halved here)
    assert c.ceilings["copy_gbps"][2] == pytest.approx(4800 / 3350)
    assert c.ceilings["bf16_tflops"][2] == pytest.approx(1.0) and "datasheet peaks" in c.caption
    first = c.speed[: len(c.flagged)]
    assert c.flagged and all(s["against"] for s in first) and not any(s["against"] for s in c.speed[len(first):])
    # identical timings on both, but B's copy bandwidth is predicted 1.43x: every copy-bound series with samples
    # is "slower than the ceilings predict"; compute-bound ones (bf16 ratio 1.0) are not flagged
    assert all(s["bound_by"] == "copy" and s["note"] == "slower than the ceilings predict" for s in c.flagged)
    assert not any(s["against"] for s in c.speed if s["bound_by"] == "bf16")
    gbps = [s for s in c.speed if s["metric"] == "gbps"]
    assert gbps and all(s["share_a"] == pytest.approx(2 * s["share_b"]) for s in gbps if s["share_a"])


def test_different_commits_compare_only_same_kernel_versions(docs):
    h200, h100 = docs
    moved = json.loads(json.dumps(h100))
    moved["run"]["git"]["commit"] = "0" * 40
    moved["results"][0]["impl_hash"] = "changed"
    c = compare(moved, h200)
    assert "commits differ" in c.caption and "1 left out" in c.caption


def test_pick_and_cli_on_the_database(db_url, docs, tmp_path):
    h200, h100 = docs
    ingest(db_url, [("h200", h200), ("h100", h100)])
    with open_db(db_url)() as s:
        assert pick(s) == (h100["run"]["id"], h200["run"]["id"])
        assert pick(s, "h200", "h100", commit=h200["run"]["git"]["commit"][:7]) == (h200["run"]["id"], h100["run"]["id"])
        c = load(s, "h100", "h200")
    assert len(c.alerts) == 2 and c.ceilings["copy_gbps"][2] == pytest.approx(4800 / 3350, rel=1e-3)
    r = kwatch("hardware", "--db", db_url, "--limit", "5")
    assert r.returncode == 1, r.stderr
    assert "2 alert(s)" in r.stdout and "triton_zeta_morton" in r.stdout
    r = kwatch("hardware", "--db", db_url, "--format", "json", "--gpu-a", "h200", "--gpu-b", "h100")
    out = json.loads(r.stdout)
    assert r.returncode == 1 and out["alerts"] == 2 and out["gpu_a"] == "NVIDIA H200"
    r = kwatch("hardware", "--db", db_url, "--gpu-a", "a100")
    assert r.returncode == 2 and "no run on a GPU matching 'a100'" in r.stderr


def test_cli_exit_0_without_a_quality_difference(tmp_path, docs):
    h200, _ = docs
    url = f"sqlite:///{tmp_path / 'kw.db'}"
    ingest(url, [("h200", h200), ("h100", as_h100(h200, lose_zeta=False))])
    r = kwatch("hardware", "--db", url, "--limit", "3")
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr
    assert "0 alert(s)" in r.stdout
