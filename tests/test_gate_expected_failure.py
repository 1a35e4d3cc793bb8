"""An implementation kept because it is known to fail correctness is reported but never blocks."""
from db.verdict import judge

def row(status, stats, impl="cublas_bf16x9_kcat"):
    return {"technique": "gemm_fp32_emulation", "impl": impl, "case": "m8192n8192k8192", "metric": "rel_err",
            "status": status, "stats": stats, "error": "rel_err 8.5e-05 > tolerance", "value": 8.5e-5,
            "unit": "1", "direction": "lower", "params": {}, "samples": []}


def test_expected_failure_is_not_a_new_failure():
    v = judge(None, row("failed_correctness", {"expected_failure": "fast and wrong"}))
    assert v.status == "expected failure" and not v.new_failure and not v.blocking
    assert v.reason.startswith("expected (fast and wrong)")


def test_unexpected_failure_blocks():
    v = judge(row("ok", {}, "cublas_fp32"), row("failed_correctness", {}, "cublas_fp32"))
    assert v.status == "failed correctness" and v.new_failure and v.blocking


def test_rows_written_before_the_flag_take_it_from_the_suite():
    """Result files older than stats.expected_failure: the suite's Impl.expect_failure decides."""
    v = judge(None, row("failed_correctness", {}))
    assert v.status == "expected failure" and not v.new_failure and v.reason.startswith("expected (fast and wrong")


def test_the_two_committed_h200_gemm_runs_pass_the_gate(tmp_path):
    from tests.conftest import ROOT, kwatch

    h200 = ROOT / "results/h200"
    p = kwatch("gate", "--baseline", str(h200 / "gemm_fp32_emulation_nightly_foundation.json.gz"), "--candidate",
               str(h200 / "gemm_fp32_emulation_nightly.json.gz"), "--db", f"sqlite:///{tmp_path / 'kw.db'}")
    assert p.returncode == 0, p.stdout + p.stderr
    assert "cublas_bf16x9_kcat" in p.stdout and "expected (" in p.stdout  # reported, not dropped
