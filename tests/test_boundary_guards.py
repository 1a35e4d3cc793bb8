"""The measuring boundary's in-process guards (runners.guard): a replaced harness function, a forged
timer and a wall clock that saw more than the samples report are each refused with a one-line reason."""
import math
import time

import pytest
import torch

import runners.stats
import runners.timing
from runners import guard
from runners.timing import Protocol, measure

QUICK = Protocol(max_time_s=0.05, min_reps=10, max_reps=200)


@pytest.fixture(autouse=True)
def _armed():
    guard.arm()
    yield
    guard.verify()  # each test restores what it replaced


def _refused(fn) -> str:
    with pytest.raises(guard.BoundaryViolation) as exc:
        measure(fn, "cpu", QUICK)
    return str(exc.value)


@pytest.mark.parametrize("holder,name", [(time, "perf_counter"), (time, "monotonic_ns"),
                                         (runners.stats, "summarize"), (runners.timing, "_done"),
                                         (runners.stats, "rel_spread_below"), (math, "fsum"), (math, "sqrt"),
                                         (runners.timing, "summarize"), (torch.cuda.Event, "elapsed_time"),
                                         (torch.cuda, "synchronize"), (guard, "wall_check")])
def test_a_harness_function_replaced_by_the_code_under_test_is_refused(holder, name):
    real = getattr(holder, name)
    state = {"n": 0}

    def sneaky():
        state["n"] += 1
        if state["n"] == 5:  # after the warm-up, as code under test would at its first timed call
            setattr(holder, name, lambda *a, **k: real(*a, **k))

    try:
        msg = _refused(sneaky)
    finally:
        setattr(holder, name, real)
    assert msg.startswith("a harness function was replaced during the run: ") and name in msg


def test_the_timer_is_the_one_captured_before_the_code_under_test():
    real = time.perf_counter
    time.perf_counter = lambda: real() * 0.1  # as a solution would at import
    try:
        assert guard.clock is real and runners.timing.guard.clock is real
        assert guard.replaced(full=False) == ["time.perf_counter"]
    finally:
        time.perf_counter = real


def test_an_honest_call_passes_every_guard():
    x = torch.randn(256, 256)
    samples, stats = measure(lambda: x @ x, "cpu", QUICK)
    assert stats["n"] == len(samples) >= 10


def test_the_wall_clock_refuses_reported_times_far_below_it():
    # 100 calls that reported 1 ms in all while the host saw 2 s: a forged timer or side-stream work
    with pytest.raises(guard.BoundaryViolation, match="reported GPU time is below what the wall clock saw"):
        guard.wall_check(2.0, 1.0, 100, 0.02)
    guard.wall_check(0.3, 200.0, 100, 0.02)  # launch-bound honest calls: host overhead is allowed for
    with pytest.raises(guard.BoundaryViolation, match="the timer disagrees with the monotonic clock"):
        guard.cpu_clock_check(0.01, 0.5, 100)
    guard.cpu_clock_check(0.5, 0.5001, 100)


def test_a_module_watched_later_is_verified_too(tmp_path):
    import importlib.util

    (tmp_path / "prob.py").write_text("class Model:\n    def forward(self):\n        return 1\n")
    spec = importlib.util.spec_from_file_location("kernelbench_watch_test", tmp_path / "prob.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    guard.watch(mod)
    real = mod.Model.forward
    mod.Model.forward = lambda self: 2
    try:
        assert "kernelbench_watch_test.Model.forward" in guard.replaced()
    finally:
        mod.Model.forward = real
