"""The A/B rule on the committed H200 A/B files: identical code passes, the planted slowdown fails,
and the same files judged as a nightly comparison keep the nightly spread."""
import copy
import gzip
import json

import pytest

from ci.gate import run_gate
from ci.gate_refs import resolve
from db.verdict import Thresholds, interleaved, judge
from db.verdict.ab import aa_spread, compare_ab, round_spread
from tests.conftest import ROOT

HIST = ROOT / "results/h200/history"


def _gate(name: str, strip_ab: bool = False):
    base, head = (resolve(str(HIST / f"{name}_{side}.json.gz"), None, None) for side in ("base", "head"))
    if strip_ab:
        for side in (base, head):
            side.run = copy.deepcopy(side.run)
            side.run["config"].pop("ab")
    return run_gate(base, head)


def _timed(result):
    return {(v.key.subject[1], v.key.subject[2], v.key.subject[3]): v for v in result.verdicts
            if v.kind in ("timing", "throughput")}


@pytest.mark.parametrize("name", ["ab_same", "ab_same2"])
def test_identical_code_passes_the_ab_gate(name):
    result = _gate(name)
    assert not result.failed
    timed = _timed(result)
    assert timed and not any(v.status in ("regressed", "improved") for v in timed.values())
    assert all("round-to-round spread" in v.reason for v in timed.values())


def test_the_planted_slowdown_fails_on_its_kernel_only():
    result = _gate("ab_slow2")
    assert result.failed
    regressed = {k for k, v in _timed(result).items() if v.status == "regressed"}
    assert regressed == {("triton_bf16x9", c, m) for c in ("m2048n2048k2048", "m8192n8192k8192")
                         for m in ("latency_ms", "tflops")}
    slow = _timed(result)[("triton_bf16x9", "m8192n8192k8192", "latency_ms")]
    assert 0.025 < slow.change < 0.04 and slow.blocking


def test_three_rounds_do_not_decide_the_earlier_planted_run():
    v = _timed(_gate("ab_slow"))[("triton_bf16x9", "m8192n8192k8192", "latency_ms")]
    assert v.status == "insufficient data" and v.ambiguous and 0.02 < v.change < 0.03


def test_a_nightly_comparison_keeps_the_nightly_spread():
    result = _gate("ab_slow2", strip_ab=True)
    v = _timed(result)[("triton_bf16x9", "m8192n8192k8192", "latency_ms")]
    assert v.status != "regressed"  # 3 % is under the nightly 5 % effect
    # the nightly run-to-run spread (the series' own, narrower than the protocol's 2.8 %), not the A/B's
    assert f"narrower than the protocol's {Thresholds().run_cv_gpu:.1%}" in v.reason and "A/B" not in v.reason


def test_interleaved_needs_the_same_ab_header_on_both_sides():
    run = json.load(gzip.open(HIST / "ab_slow2_base.json.gz"))["run"]
    other = json.load(gzip.open(HIST / "ab_same2_base.json.gz"))["run"]
    assert interleaved(run, run) and not interleaved(run, other)
    assert not interleaved({"config": {}}, {"config": {}}) and not interleaved(None, run)


def test_the_calibration_reproduces_the_thresholds_from_the_aa_file():
    rows = {s: json.load(gzip.open(HIST / f"ab_same_{s}.json.gz"))["results"] for s in ("base", "head")}
    cal = aa_spread(rows["base"], rows["head"])
    th = Thresholds()
    for kind in ("timing", "throughput"):
        spreads = [r["spread"] for r in cal[kind]]
        rms = (sum(s * s for s in spreads) / len(spreads)) ** 0.5
        assert abs(rms - th.ab_cv) < 0.001
        assert max(abs(r["z"]) for r in cal[kind]) < th.ab_z
        assert max(abs(r["change"]) for r in cal[kind]) < th.ab_min_effect


def _row(rounds, per_round=20, jitter=0.001):
    samples = [v * (1 + jitter * ((i % 5) - 2)) for v in rounds for i in range(per_round)]
    return {"technique": "t", "impl": "i", "case": "c", "metric": "latency_ms", "unit": "ms",
            "direction": "lower", "status": "ok", "value": sorted(samples)[len(samples) // 2],
            "samples": samples, "stats": {"protocol": "cuda-events+l2flush+graph/v3",
                                          "round_values": list(rounds), "rounds": len(rounds)}}


def test_round_spread_decides_not_the_sample_count():
    base = _row([1.00, 1.02, 0.98, 1.01, 0.99])
    steady = _row([1.031, 1.029, 1.030, 1.032, 1.028])
    noisy = _row([1.00, 1.08, 0.99, 1.06, 1.02])  # the same +3 % mean in noisy rounds
    assert compare_ab(base, steady, "lower").outcome == "regressed"
    assert compare_ab(base, noisy, "lower").outcome != "regressed"
    assert judge(base, steady, ab=True).status == "regressed"
    assert judge(base, steady).status != "regressed"  # nightly: 5 % effect, 2.8 % spread


def test_one_round_a_side_falls_back_to_the_calibrated_spread():
    assert round_spread([0.0], [0.01]) == Thresholds().ab_cv
    assert round_spread([0.0, 0.0], [0.0, 0.0]) == Thresholds().ab_cv_floor
