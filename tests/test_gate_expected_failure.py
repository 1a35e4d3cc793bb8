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
    v = judge(KEY, row("ok", {}), row("failed_correctness", {}), Thresholds())
    assert v.status == "failed correctness" and v.new_failure
