"""The fresh-value audit covers techniques whose instance structure depends on the seed (positions, a
sparse pattern, packed weights): it refills the inputs the technique names (Technique.audit_inputs)
and keeps the structure as timed, so replay on those techniques is refused like anywhere else."""
import dataclasses
import time

import pytest

from runners import guard
from runners.correctness import ReferenceCache
from runners.guard_audit import Audit
from runners.job import run_job
from runners.timing import Protocol
from suite.registry import techniques
from suite.spec import Impl, implementation, resolve

QUICK = Protocol(max_time_s=0.05, min_reps=10, max_reps=200)
_HONEST = None
_cache: dict = {}


def _honest(out, **inputs):
    global _HONEST
    if _HONEST is None:
        rope = techniques()["rope"]
        _HONEST = implementation(next(i for i in rope.impls if i.name == "torch_table_fp32"))
    _HONEST(out, **inputs)


def slow_honest(out, **inputs):
    """The real rope plus 5 ms of work-like waiting on every call."""
    time.sleep(0.005)
    _honest(out, **inputs)


def replay_pointer(out, **inputs):
    """Honest on the first two calls with an input object (the check's), then hands back its second
    answer for as long as the same object comes again (the timed calls): replay keyed on identity."""
    x = inputs["x"]
    calls, answer = getattr(x, "_planted", (0, None))  # kept on the tensor object itself
    if calls < 2:
        _honest(out, **inputs)
        x._planted = (calls + 1, out.clone())
    else:
        out.copy_(answer)


def replay_content(out, **inputs):
    """Exact on new values (5 ms), a copy of the stored answer when a few values were seen before."""
    key = tuple(inputs["x"].flatten()[:4].tolist())
    if key not in _cache:
        slow_honest(out, **inputs)
        _cache[key] = out.clone()
    out.copy_(_cache[key])


def _run(impl_name: str) -> dict:
    rope = techniques()["rope"]
    impl = Impl(impl_name, f"tests.test_audit_structure:{impl_name}")
    tech = dataclasses.replace(rope, impls=rope.impls + (impl,))
    case = tech.cases_for("smoke_full")[0]
    _cache.clear()
    guard.arm()
    rows = run_job(tech, impl, case, "cpu", 1234, QUICK, ReferenceCache())
    return next(r for r in rows if r["metric"] == "latency_ms")


def test_rope_is_audited_although_its_positions_depend_on_the_seed():
    row = _run("slow_honest")
    assert row["status"] == "ok" and row["stats"]["audit"] == "passed", row["stats"].get("audit")


@pytest.mark.parametrize("name,reason", [
    ("replay_pointer", "timed outputs differ from the reference on fresh inputs"),
    ("replay_content", "results are being replayed"),
])
def test_replay_on_a_seed_structured_technique_is_refused(name, reason):
    row = _run(name)
    assert row["status"] == "failed_correctness" and reason in (row["error"] or ""), row["error"]


def test_no_smoke_case_skips_the_audit_because_its_structure_depends_on_the_seed():
    skipped = []
    for tech in techniques().values():
        for case in tech.cases_for("smoke_full"):
            inputs = resolve(tech.make_inputs)(case.params, 11, "cpu")
            out = resolve(tech.empty_output)(case.params, "cpu")
            why = Audit(tech, tech.impls[0], case, "cpu", 5, ReferenceCache(), inputs, out)._why_not()
            if why and ("seed" in why or "audit input" in why):
                skipped.append((tech.name, case.id, why))
    assert skipped == []


def test_a_named_audit_input_that_is_not_a_float_tensor_is_a_stated_skip():
    rope = techniques()["rope"]
    tech = dataclasses.replace(rope, audit_inputs=("pos",))
    case = tech.cases_for("smoke_full")[0]
    a = Audit(tech, tech.impls[0], case, "cpu", 5, ReferenceCache(),
              resolve(tech.make_inputs)(case.params, 11, "cpu"), resolve(tech.empty_output)(case.params, "cpu"))
    assert not a.ready() and a.skipped == "audit input 'pos' is not a dense floating-point tensor of the instance"


def test_audit_coverage_reads_a_committed_nightly_from_before_the_audit_inputs():
    """results/h100/nightly_v4_1661801.json.gz predates Technique.audit_inputs: rope and w4a16 were skipped."""
    import json

    from runners.resultfile import load
    from runners.studies.audit_coverage import _latency, coverage, median_ratio
    from tests.conftest import ROOT

    doc = load(str(ROOT / "results/h100/nightly_v4_1661801.json.gz"))
    cov = coverage(doc)
    assert cov["rope"]["audited"] == 0 and sum(cov["rope"]["skipped"].values()) == 20
    assert cov["activations"]["audited"] == 8 and not cov["activations"]["skipped"]
    lat = _latency(doc)
    assert median_ratio(lat, lat) == {"series": len(lat), "median": 1.0, "p10": 1.0, "p90": 1.0}
    after = json.loads((ROOT / "results/h100/studies/audit_coverage_afa1651.json").read_text())
    assert after["techniques"]["rope"]["audited"] == 20 and after["refused"] == 0
