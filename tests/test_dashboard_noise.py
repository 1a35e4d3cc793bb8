"""Trends warns when a series' real H200 history is too noisy for a 5% change (10 repeated runs)."""
import pytest

from tests.conftest import ROOT, kwatch
from tests.test_dashboard_pages import run_page

REPEATS = sorted((ROOT / "results/h200/repeats").glob("rep_*.json.gz"))[:10]


@pytest.fixture(scope="module")
def repeats_url(tmp_path_factory):
    url = f"sqlite:///{tmp_path_factory.mktemp('noise') / 'kw.db'}"
    p = kwatch("ingest", *map(str, REPEATS), "--db", url)
    assert p.returncode == 0, p.stderr
    return url


def _resolution(at):
    frames = [d.value for d in at.dataframe if "smallest step found" in d.value.columns]
    assert len(frames) == 1
    return frames[0]


def test_noisy_series_is_warned_about(repeats_url, monkeypatch):
    q = {"technique": "gemm_fp64_ozaki", "impl": "cublas_int8_ozaki_s8", "case": "m256n256k256", "metric": "latency_ms"}
    at = run_page(repeats_url, "trends", monkeypatch, q)
    res = _resolution(at)
    assert list(res["nights"]) == [10] and res["night CV"].iloc[0] > 0.05 and res["smallest step found"].iloc[0] > 0.1
    assert any("too much night to night for a 5 % change" in w.value for w in at.warning)


def test_quiet_series_is_not(repeats_url, monkeypatch):
    q = {"technique": "softmax_online", "impl": "triton_poly3", "case": "b4h16s4096d64", "metric": "latency_ms"}
    at = run_page(repeats_url, "trends", monkeypatch, q)
    res = _resolution(at)
    assert res["night CV"].iloc[0] < 0.005 and res["smallest step found"].iloc[0] == pytest.approx(0.03, abs=0.005)
    assert not any("5 % change" in w.value for w in at.warning)
