"""An implementation kept because it is known to fail correctness is reported but never blocks."""
from ci.gate_compare import Thresholds, judge
from db.series import SeriesKey

KEY = SeriesKey("gemm_fp32_emulation", "cublas_bf16x9_kcat", "m8192n8192k8192", "rel_err", "hw", "sw")


def row(status, stats):
    return {"status": status, "stats": stats, "error": "rel_err 8.5e-05 > tolerance", "value": 8.5e-5,
            "unit": "1", "direction": "lower", "params": {}, "samples": []}


def test_expected_failure_is_not_a_new_failure():
    v = judge(KEY, None, row("failed_correctness", {"expected_failure": "fast and wrong"}), Thresholds())
    assert v.status == "failed correctness" and not v.new_failure
    assert v.reason.startswith("expected (fast and wrong)")


def test_unexpected_failure_blocks():
    key = SeriesKey("gemm_fp32_emulation", "cublas_fp32", "m8192n8192k8192", "rel_err", "hw", "sw")
    v = judge(key, row("ok", {}), row("failed_correctness", {}), Thresholds())
    assert v.status == "failed correctness" and v.new_failure


def test_rows_written_before_the_flag_take_it_from_the_suite():
    """Result files older than stats.expected_failure: the suite's Impl.expect_failure decides."""
    v = judge(KEY, None, row("failed_correctness", {}), Thresholds())
    assert not v.new_failure and v.reason.startswith("expected (fast and wrong")


def test_the_two_committed_h200_gemm_runs_pass_the_gate(tmp_path):
    from tests.conftest import ROOT, kwatch

    h200 = ROOT / "results/h200"
    p = kwatch("gate", "--baseline", str(h200 / "gemm_fp32_emulation_nightly_foundation.json"), "--candidate",
               str(h200 / "gemm_fp32_emulation_nightly.json"), "--db", f"sqlite:///{tmp_path / 'kw.db'}")
    assert p.returncode == 0, p.stdout + p.stderr
    assert "cublas_bf16x9_kcat" in p.stdout and "expected (" in p.stdout  # reported, not dropped
