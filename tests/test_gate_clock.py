"""The gate flags a series whose GPU clock fell while it was measured (real H200 runs, throttled)."""
import json

from db.verdict import clock_drop
from tests.conftest import ROOT, kwatch

REPEATS = ROOT / "results/h200/repeats"
SERIES = ("gemm_fp64_ozaki", "cublas_fp64", "m4096n4096k4096")


def test_throttled_candidate_is_flagged_and_a_steady_one_is_not(tmp_path):
    js, md = tmp_path / "g.json", tmp_path / "g.md"
    p = kwatch("gate", "--baseline", str(REPEATS / "rep_a01.json.gz"), "--candidate", str(REPEATS / "rep_b07.json.gz"),
               "--json", str(js), "--markdown", str(md), "--db", f"sqlite:///{tmp_path / 'kw.db'}")
    assert js.exists(), p.stdout + p.stderr
    verdicts = {(v["key"]["technique"], v["key"]["impl"], v["key"]["case_id"], v["key"]["metric"]): v
                for v in json.loads(js.read_text())["series"]}
    throttled = verdicts[(*SERIES, "latency_ms")]
    assert any("SM clock fell during the candidate's measurement (1980 -> 1545 MHz)" in f for f in throttled["flags"])
    assert not any("baseline's measurement" in f for f in throttled["flags"])
    steady = verdicts[("gemm_fp64_ozaki", "cublas_fp64", "m256n256k256", "latency_ms")]
    assert not any("SM clock" in f for f in steady["flags"])
    assert "1980 -> 1545 MHz" in md.read_text()


def test_clock_drop_needs_both_clocks_and_a_real_fall():
    assert clock_drop({"stats": {"sm_clock_before_mhz": 1980, "sm_clock_after_mhz": 1965}}) is None  # within 3%
    assert clock_drop({"stats": {"sm_clock_before_mhz": 1980, "sm_clock_after_mhz": 1725}}) == (1980, 1725)
    assert clock_drop({"stats": {"sm_clock_before_mhz": None, "sm_clock_after_mhz": 1725}}) is None  # CPU rows
    assert clock_drop({}) is None
