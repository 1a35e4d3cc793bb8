"""How the CUDA timing protocol decides on graph capture, and that it leaves no memory behind (GPU only)."""
import pytest
import torch

from runners.timing import Protocol, measure

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
GIB = 1 << 30
QUICK = Protocol(max_time_s=0.2, min_reps=10, max_reps=160)


def _reserved_after_cleanup() -> int:
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    return torch.cuda.memory_reserved()


def test_a_small_call_is_replayed_as_a_graph():
    x = torch.randn(1 << 20, device="cuda")
    _, stats = measure(lambda: x.mul_(1.0), "cuda", QUICK)
    assert stats["protocol"] == "cuda-events+l2flush+graph/v3"


def test_a_call_with_scratch_over_a_quarter_of_the_gpu_is_not_captured_and_leaves_nothing():
    base = _reserved_after_cleanup()
    total = torch.cuda.get_device_properties(0).total_memory
    n = int(total * 0.3)

    def big_scratch():
        torch.empty(n, dtype=torch.uint8, device="cuda").fill_(1)

    _, stats = measure(big_scratch, "cuda", QUICK)
    assert stats["protocol"] == "cuda-events+l2flush/v3"
    assert _reserved_after_cleanup() - base < GIB


def test_a_call_with_a_host_sync_falls_back_to_plain_launches():
    x = torch.ones(1 << 20, device="cuda")
    _, stats = measure(lambda: x.sum().item(), "cuda", QUICK)
    assert stats["protocol"] == "cuda-events+l2flush/v3"
    y = torch.randn(1 << 20, device="cuda")  # the failed capture left the device usable
    _, stats = measure(lambda: y.mul_(1.0), "cuda", QUICK)
    assert "graph" in stats["protocol"]


def test_a_small_call_on_placements_pools_samples_from_every_copy():
    from runners.placements import placed_copies

    a, b = torch.randn(256, 256, dtype=torch.float64, device="cuda"), torch.randn(256, 256, dtype=torch.float64, device="cuda")
    out = torch.empty_like(a)
    copies = placed_copies({"a": a, "b": b}, out, QUICK.placements)
    calls = [lambda i=i, o=o: torch.matmul(i["a"], i["b"], out=o) for i, o, _ in copies]
    samples, stats = measure(calls, "cuda", QUICK)
    assert stats["protocol"] == "cuda-events+l2flush+graph+place8/v3"
    assert len(stats["placement_medians"]) == 8 and all(m > 0 for m in stats["placement_medians"])
    assert len(samples) % (8 * QUICK.batch) == 0
    for i, o, _ in copies:  # every copy really ran the product
        torch.testing.assert_close(o, a @ b)
