"""The measuring protocol catches wrong, incomplete, crashing and hanging implementations."""
import os

import pytest

from runners.run import RunOptions, execute
from runners.timing import Protocol

FAST = Protocol(target_rel_spread=0.5, max_time_s=0.2, min_reps=3, warmup_reps=1)


@pytest.fixture(scope="module")
def faulty_rows(tmp_path_factory):
    os.environ["KWATCH_EXTRA_TECHNIQUES"] = "tests.fixtures.faulty"
    out = tmp_path_factory.mktemp("faulty") / "run.json"
    try:
        rf = execute(RunOptions(tier="smoke", techniques=["faulty_gemm"], device="cpu", timeout_s=20,
                                protocol=FAST), out)
    finally:
        del os.environ["KWATCH_EXTRA_TECHNIQUES"]
    by = {}
    for r in rf.results:
        by.setdefault(r["impl"], {})[r["metric"]] = r
    return by, out


def test_good_implementation_passes_and_is_timed(faulty_rows):
    by, _ = faulty_rows
    assert by["good"]["rel_err"]["status"] == "ok"
    assert by["good"]["rel_err"]["value"] < 1e-6
    lat = by["good"]["latency_ms"]
    assert lat["status"] == "ok" and lat["value"] > 0 and len(lat["samples"]) >= 3
    assert lat["stats"]["protocol"] == "cpu-perfcounter/v1"


def test_wrong_implementation_is_caught_and_not_timed(faulty_rows):
    by, _ = faulty_rows
    assert by["wrong"]["rel_err"]["status"] == "failed_correctness"
    assert "tolerance" in by["wrong"]["rel_err"]["error"]
    assert by["wrong"]["latency_ms"]["status"] == "failed_correctness"
    assert by["wrong"]["latency_ms"]["value"] is None


def test_unwritten_output_is_caught(faulty_rows):
    by, _ = faulty_rows
    assert by["partial"]["rel_err"]["status"] == "failed_correctness"
    assert by["partial"]["latency_ms"]["value"] is None


@pytest.mark.parametrize("impl,needle", [("crash", "exit code"), ("hang", "timeout"), ("raises", "deliberate failure")])
def test_crash_hang_and_exception_become_errors(faulty_rows, impl, needle):
    by, _ = faulty_rows
    for row in by[impl].values():
        assert row["status"] == "error"
        assert needle in row["error"]


def test_run_goes_on_after_failures(faulty_rows):
    by, out = faulty_rows
    assert by["good_after"]["latency_ms"]["status"] == "ok"  # after the crash and the hang
    import json

    doc = json.loads(out.read_text())
    assert doc["run"]["finished_at"] is not None
    assert len(doc["results"]) == 8 * 2
    assert by["cuda_fault"]["latency_ms"]["status"] == "skipped"  # no GPU here


def test_autotuner_choice_recorded_for_first_triton_job(tmp_path):
    rf = execute(RunOptions(tier="smoke", techniques=["gemm_fp32_emulation"], impls=["triton_dot_ieee"],
                            cases=["m64n64k64"], device="cpu", protocol=FAST), tmp_path / "r.json")
    [row] = [r for r in rf.results if r["metric"] == "latency_ms"]
    assert row["status"] == "ok"
    assert "BM: 32" in row["stats"]["autotune"]["triton_gemm_kernel.gemm_kernel"]


def test_expected_failure_is_recorded_and_does_not_break_the_run():
    from runners.run import broken

    row = {"status": "failed_correctness", "stats": {"expected_failure": "fast and wrong"}}
    assert broken([row]) == []
    assert broken([{"status": "failed_correctness", "stats": {}}]) != []
    assert broken([{"status": "failed_correctness", "stats": {"probe": True}}]) == []
    assert broken([{"status": "error", "stats": {"expected_failure": "x"}}]) != []
