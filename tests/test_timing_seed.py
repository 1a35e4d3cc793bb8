"""Every run times a case on the same input instance (runners.job.timing_seed) while its correctness
check draws fresh seeds: a data-dependent kernel's time is a property of the code, not of the night's draw."""
import os

os.environ.setdefault("TRITON_INTERPRET", "1")

import pytest  # noqa: E402
import torch  # noqa: E402

from runners.correctness import ReferenceCache  # noqa: E402
from runners.job import run_job, timing_seed  # noqa: E402
from runners.run import SMOKE_PROTOCOL  # noqa: E402
from suite.registry import get  # noqa: E402
from suite.techniques.sparse_gemm.reference import _mask  # noqa: E402
from suite.techniques.sparse_gemm.tiles import TILE  # noqa: E402


def test_the_timing_seed_is_fixed_per_case_and_differs_between_cases():
    seeds = {(t, c): timing_seed(t, c) for t in ("sparse_gemm", "w4a16_gemm") for c in ("m16_block_d10", "m1_8b_up")}
    assert seeds == {k: timing_seed(*k) for k in seeds}  # a pure function of its names
    assert len(set(seeds.values())) == len(seeds)
    assert all(1 <= s < 2**31 - 20_000 for s in seeds.values())


def test_two_runs_time_the_same_instance_and_check_on_fresh_ones():
    """Two runs of one job with different base seeds: the same timing seed is recorded, the correctness seeds
    are each run's own."""
    tech = get("sparse_gemm")
    case = tech.case("m8_block_d50")
    stats = []
    for seed0 in (11, 5000):
        rows = run_job(tech, tech.impl("cublas_dense"), case, "cpu", seed0, SMOKE_PROTOCOL, ReferenceCache())
        timed = [r for r in rows if r["metric"] == "latency_ms"][0]
        assert timed["status"] == "ok"
        stats.append(timed["stats"])
    assert stats[0]["timing_seed"] == stats[1]["timing_seed"] == timing_seed("sparse_gemm", "m8_block_d50")
    assert stats[0]["seeds"] != stats[1]["seeds"]
    assert stats[0]["timing_seed"] not in stats[0]["seeds"] + stats[1]["seeds"]


@pytest.mark.parametrize("density,spread", [(0.1, 5), (0.5, 6)])
def test_a_random_tile_pattern_moves_the_longest_row_from_draw_to_draw(density, spread):
    """Why a fixed instance: the tile-skipping kernel's time follows the longest row of nonzero tiles, and with
    a fresh draw per run that row (4096^2, 64 x 64 tiles, M = 16) spans several tiles over 40 seeds."""
    p = {"m": 16, "n": 4096, "k": 4096, "pattern": "block", "density": density}
    longest = []
    for seed in range(40):
        g = torch.Generator().manual_seed(seed)
        longest.append(int(_mask(p, g, "cpu")[::TILE, ::TILE].sum(1).max()))
    assert max(longest) - min(longest) >= spread
    g = torch.Generator().manual_seed(timing_seed("sparse_gemm", f"m16_block_d{round(density * 100)}"))
    once = _mask(p, g, "cpu")
    g = torch.Generator().manual_seed(timing_seed("sparse_gemm", f"m16_block_d{round(density * 100)}"))
    assert torch.equal(once, _mask(p, g, "cpu"))


def _two_runs(slow: float, seeds: tuple):
    """Two rows of one series, the candidate's samples `slow` times the baseline's, timed on `seeds`."""
    base = {"technique": "sparse_gemm", "impl": "triton_tile_skip", "case": "m16_block_d10", "metric": "latency_ms",
            "status": "ok", "value": 0.0133, "samples": [0.0133 * (1 + 0.001 * i) for i in range(200)],
            "stats": {"protocol": "cuda-events+l2read+graph/v4", "timing_seed": seeds[0]}}
    cand = {**base, "value": base["value"] * slow, "samples": [x * slow for x in base["samples"]],
            "stats": {**base["stats"], "timing_seed": seeds[1]}}
    return base, cand


@pytest.mark.parametrize("seeds,other_instance", [((7, 7), False), ((7, 8), True), ((None, 7), True)])
def test_a_change_between_runs_timed_on_different_instances_is_not_blocking(seeds, other_instance):
    """The tile-skip GEMM's time depends on its pattern (Technique.time_depends_on_data): a regression whose
    two sides were timed on different input instances (a run before the fixed timing seed drew its own) is
    ambiguous and says why; on the same instance it regresses; a stable series is never flagged. (A
    data-independent kernel regresses with a flag: tests/test_gate_instances.py.)"""
    from db.verdict import Thresholds, judge
    from db.verdict.spread import SpreadTable

    th = Thresholds(spreads=SpreadTable())
    v = judge(*_two_runs(1.40, seeds), th)
    if other_instance:
        assert v.status == "insufficient data" and v.ambiguous and not v.blocking
        assert "different input instances of a kernel whose time depends on the data" in v.reason
    else:
        assert v.status == "regressed" and v.blocking and not any("different input instances" in f for f in v.flags)
    v = judge(*_two_runs(1.0, seeds), th)
    assert v.status == "stable" and not any("different input instances" in f for f in v.flags)
