"""CUDA graph capture in the timing protocol gives its memory back (runs on a GPU only)."""
import pytest
import torch

from runners.timing import Protocol, measure

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
GIB = 1 << 30
QUICK = Protocol(max_time_s=0.2, min_reps=10, max_reps=20)


def _reserved_after_cleanup() -> int:
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    return torch.cuda.memory_reserved()


def test_a_failed_capture_does_not_keep_its_memory():
    base = _reserved_after_cleanup()

    def host_sync_after_8gib():
        x = torch.ones(8 * GIB, dtype=torch.uint8, device="cuda")
        x.sum().item()  # a host sync: not capturable

    _, stats = measure(host_sync_after_8gib, "cuda", QUICK)
    assert "graph" not in stats["protocol"]
    assert _reserved_after_cleanup() - base < GIB


def test_a_call_needing_over_half_the_gpu_is_still_captured():
    _reserved_after_cleanup()
    free, _ = torch.cuda.mem_get_info()
    n = int(free * 0.55)

    def big_temporary():
        torch.empty(n, dtype=torch.uint8, device="cuda").fill_(1)

    _, stats = measure(big_temporary, "cuda", QUICK)
    assert "graph" in stats["protocol"]
    assert _reserved_after_cleanup() < GIB
