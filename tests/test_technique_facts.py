"""suite/facts.json: what the verdict asks of the spec, answered without importing kernel code (torch)."""
import subprocess
import sys

from suite import facts, registry


def test_committed_facts_are_what_the_registry_says():
    """A spec change without `python -m suite.facts --write` fails here, not silently in a verdict."""
    assert facts.committed() == facts.of_registry(), "suite/facts.json is out of date: python -m suite.facts --write"


def test_answers_from_the_facts_equal_the_spec_for_every_impl_and_case():
    """known_failure and time_depends_on_data give the spec's answer for every technique, impl, declared case
    and an undeclared (probe) case id, and for a technique the facts do not hold."""
    for name, tech in registry.techniques().items():
        assert registry.time_depends_on_data(name) == tech.time_depends_on_data
        for impl in [i.name for i in tech.impls] + ["no_such_impl"]:
            spec_impl = next((i for i in tech.impls if i.name == impl), None)
            for case in [c.id for c in tech.cases] + ["probe_point_x"]:
                want = (spec_impl.expect_failure if spec_impl is not None and spec_impl.expect_failure else
                        "probe point: its failed correctness is a measurement"
                        if tech.probe and case not in {c.id for c in tech.cases} else "")
                assert registry.known_failure(name, impl, case) == want, (name, impl, case)
    assert registry.time_depends_on_data("no_such_technique") is False
    assert registry.known_failure("no_such_technique", "x", "y") == ""


def test_the_facts_mark_the_data_dependent_kernels():
    """The three techniques whose time follows a random pattern or selection are marked, a dense one is not."""
    marked = {n for n, f in facts.committed().items() if f["time_depends_on_data"]}
    assert {"sparse_gemm", "sparse_selectors", "attention_block_sparse"} <= marked
    assert "attention_dense" not in marked


def test_judging_a_data_dependent_series_imports_no_torch():
    """The verdict's spec questions cost no torch import (1.4 s of a dashboard's first Health load)."""
    code = ("import sys; from suite.registry import known_failure, time_depends_on_data; "
            "assert time_depends_on_data('sparse_gemm'); known_failure('sparse_gemm', 'x', 'y'); "
            "import db.verdict, dashboard.verdict; "
            "print(sorted(m for m in sys.modules if m == 'torch' or m.startswith('suite.techniques.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
