"""The stopping and warm-up rules of the timing protocol (CUDA v4)."""
from runners.timing import Protocol, _done, extra_warmup_calls

P = Protocol()


def test_protocol_names_carry_the_version():
    assert P.name("cuda", True) == "cuda-events+l2read+graph/v4"
    assert P.name("cuda", False) == "cuda-events+l2read/v4"
    assert P.name("cpu", False) == "cpu-perfcounter/v1"
    assert Protocol(cuda_version=3, flush_mode="zero").name("cuda", True) == "cuda-events+l2flush+graph/v3"


def test_a_tight_first_batch_does_not_stop_before_the_minimum_time():
    tight = [0.042] * 10  # 10 calls, 0.42 ms of GPU time in all
    assert not _done(tight, sum(tight) / 1e3, P, P.min_time_s)
    many = [0.038] * 2700
    assert _done(many, sum(many) / 1e3, P, P.min_time_s)


def test_a_noisy_series_stops_at_the_time_cap():
    noisy = [1.0, 2.0] * 1000
    assert not _done(noisy[:20], 1.9, P, P.min_time_s)
    assert _done(noisy[:20], P.max_time_s, P, P.min_time_s)


def test_fewer_than_min_reps_never_stop():
    assert not _done([5.0] * (P.min_reps - 1), 10.0, P, P.min_time_s)


def test_warm_up_covers_the_warm_up_time():
    assert extra_warmup_calls(38e-6, P) == 657  # 658 calls of 38 us: 25.0 ms
    assert extra_warmup_calls(0.0023, P) == 10  # 11 calls of 2.3 ms
    assert extra_warmup_calls(1.1, P) == 0  # one call of a second is warm-up enough
    assert extra_warmup_calls(0.0, P) == P.max_reps


def test_protocol_version_reads_back_what_name_writes():
    from runners.timing import protocol_version

    assert protocol_version(P.name("cuda", True)) == P.cuda_version == 4
    assert protocol_version("cuda-events+l2flush/v2") == 2
    assert protocol_version("pytest-benchmark") == 0 and protocol_version(None) == 0


def test_only_small_cuda_calls_are_timed_on_several_placements():
    assert P.placements_for("cuda", 1_572_864) == P.placements == 8  # fp64 256^3: 1.5 MiB of operands
    assert P.placements_for("cuda", (16 << 20) + 1) == 1
    assert P.placements_for("cpu", 1024) == 1
    assert P.name("cuda", True, 8) == "cuda-events+l2read+graph+place8/v4"
    assert P.name("cuda", True, 1) == P.name("cuda", True)


def test_the_reading_flush_reads_and_the_zeroing_flush_writes():
    import torch

    from runners.timing import _Flush

    buf = torch.arange(1000, dtype=torch.int32)
    read = _Flush(buf, "read")
    read()
    assert read.acc.item() == 999 * 1000 // 2 and buf[-1].item() == 999  # read, left as it was
    _Flush(buf, "zero")()
    assert buf.eq(0).all()


def test_the_fast_stop_rule_decides_as_the_exact_one():
    """rel_spread_below against summarize's exact stdev/mean: the same answer on 3,000 random sample lists
    (lognormal timings of 2-2,000 samples) at targets set at, just above and just below each list's own spread."""
    import random

    from runners.stats import rel_spread_below, summarize

    rng = random.Random(3)
    disagree = 0
    for _ in range(1000):
        n = rng.choice([2, 3, 10, 57, 400, 2000])
        xs = [rng.lognormvariate(rng.uniform(-8, 3), rng.choice([1e-6, 1e-3, 0.02, 0.5])) for _ in range(n)]
        exact = summarize(xs)["rel_spread"]
        for target in (exact, exact * (1 + 1e-12), exact * (1 - 1e-12), 0.02):
            disagree += rel_spread_below(xs, target) != (exact < target)
    assert disagree == 0
    assert rel_spread_below([5.0] * 30, 0.02) and not rel_spread_below([1.0, 2.0], 0.02)


def test_a_smoke_run_keeps_enough_samples_for_the_verdict_to_judge():
    """The smoke tier's timing loop stops no earlier than the verdict's minimum sample count: a steady
    function (its spread far under the 5 % target after 3 samples) is still timed min_samples times."""
    from db.verdict import Thresholds
    from runners.run import SMOKE_PROTOCOL
    from runners.timing import _time_cpu

    samples = _time_cpu(lambda: sum(range(2000)), SMOKE_PROTOCOL)
    assert len(samples) >= Thresholds().min_samples == SMOKE_PROTOCOL.min_reps
