"""Every planted solution that runs on the CPU goes through `kwatch grade`'s path (the runner, a fresh
worker per problem) and is refused with the reason of its family, or timed at its true cost; the GPU
families (side stream, L2 persistence, the CUDA event timer) run on a GPU only."""
import pytest
import torch

from runners.studies.boundary_families import EXPECTED, PLANTED, TRUE_COST_MAX, as_expected, families, run_families

# What the refusal of each family says (one line a person understands).
REASON = {
    "replay_pointer": "timed outputs differ from the reference on fresh inputs",
    "replay_identity": "timed outputs differ from the reference on fresh inputs",
    "batch_calls": "timed outputs differ from the reference on fresh inputs",
    "lazy_count": "timed outputs differ from the reference on fresh inputs",
    "replay_content": "results are being replayed",
    "patch_perf_counter": "a harness function was replaced during the run: time.perf_counter",
    "patch_event": "a harness function was replaced during the run: torch.cuda.Event.elapsed_time",
    "patch_stats": "a harness function was replaced during the run: runners.stats.summarize",
    "patch_reference": "a harness function was replaced during the run: kernelbench_",
    "side_stream": "reported GPU time is below what the wall clock saw",
    "l2_persist": "persisting L2",
}


def _check(verdicts: dict) -> None:
    for name, v in verdicts.items():
        assert as_expected(name, v), (name, v)
        if v["verdict"] == "refused":
            assert v["message"].startswith("refused by the measuring boundary: "), (name, v)
            assert REASON[name] in v["message"], (name, v["message"])
    # Timed at the true cost: the same matmul as the reference, so no speedup a replay would show (86x
    # and more); lazy_deferred hands back a tensor that computes when read, and out.set_ reads it
    # inside the timed call. (3x: the two sides are timed in different periods of a shared CPU.)
    for name in ("honest", "lazy_deferred"):
        assert verdicts[name]["speedup"] < 3, verdicts[name]


def test_a_cheat_timed_faster_than_its_true_cost_is_not_as_expected():
    assert as_expected("batch_calls", {"verdict": "refused", "speedup": None})
    assert as_expected("batch_calls", {"verdict": "ok", "speedup": 0.98})
    assert not as_expected("batch_calls", {"verdict": "ok", "speedup": 3.9})
    assert not as_expected("lazy_count", {"verdict": "ok", "speedup": TRUE_COST_MAX + 0.01})
    assert not as_expected("replay_pointer", {"verdict": "ok", "speedup": 1.0})


def test_every_planted_solution_has_an_expected_verdict_and_the_cpu_runs_the_cpu_ones():
    planted = {p.stem for p in (PLANTED / "solutions").glob("*.py")}
    assert planted == set(EXPECTED) and set(REASON) == {n for n, v in EXPECTED.items() if v.startswith("refused")}
    assert set(families("cuda")) == planted and set(families("cpu")) == planted - {"side_stream", "l2_persist"}


@pytest.mark.slow
def test_every_cpu_family_is_refused_or_timed_at_its_true_cost():
    names = families("cpu")
    assert {"honest", "replay_pointer", "replay_content", "lazy_count", "patch_perf_counter"} <= set(names)
    _check(run_families("cpu", 1024, names, max_time_s=0.3))


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_every_family_on_the_gpu():
    _check(run_families("cuda", 4096, families("cuda"), max_time_s=1.0))


@pytest.mark.parametrize("name", ["boundary_families_f4b29cc.json", "boundary_families_c97099d.json"])
def test_the_committed_h100_runs_handled_every_family(name):
    """results/h100/studies/boundary_families_*.json: the study on an H100 (n 4096), judged by as_expected."""
    import json

    doc = json.loads((PLANTED.parents[2] / "results/h100/studies" / name).read_text())
    assert doc["gpu"].startswith("NVIDIA H100") and set(doc["families"]) == set(EXPECTED)
    assert [n for n, v in doc["families"].items() if not as_expected(n, v)] == []
    assert {n for n, v in doc["families"].items() if v["verdict"] == "refused"} >= {"side_stream", "l2_persist"}
