"""exp_approx and softmax_online through the runner (CPU, interpreter): probes and rate metrics land
as rows, and a wrong exp2 is caught by the oracle, not just timed."""
import os

os.environ.setdefault("TRITON_INTERPRET", "1")

from runners.run import RunOptions, execute  # noqa: E402
from runners.timing import Protocol  # noqa: E402

FAST = Protocol(target_rel_spread=0.5, max_time_s=0.2, min_reps=3, warmup_reps=1)


def _rows(tech, impls, cases):
    rf = execute(RunOptions(tier="smoke_full", techniques=[tech], impls=impls, cases=cases, device="cpu",
                            timeout_s=300, protocol=FAST))
    return {(r["impl"], r["case"], r["metric"]): r for r in rf.results}


def test_exp_probe_and_rate_rows():
    rows = _rows("exp_approx", ["triton_mufu", "triton_hybrid3_f31"], ["elem_n4k", "sum_t4_n4k"])
    assert all(r["status"] == "ok" for r in rows.values())
    for impl in ("triton_mufu", "triton_hybrid3_f31"):
        assert rows[(impl, "sum_t4_n4k", "texp_per_s")]["value"] > 0
        every = rows[(impl, "elem_n4k/all_fp32", "ulp_max")]
        assert every["params"]["domain"] == "[-126, 0]" and every["params"]["points"] > 4000
        assert (impl, "elem_n4k/uniform", "bf16_identical_frac") in rows
        frac = rows[(impl, "elem_n4k/all_fp32", "bf16_correct_frac")]  # k of n with every result
        assert frac["stats"]["n"] == every["params"]["points"] and frac["stats"]["k"] / frac["stats"]["n"] == frac["value"]
    assert rows[("triton_mufu", "elem_n4k/all_fp32", "ulp_max")]["value"] <= 2
    hybrid = rows[("triton_hybrid3_f31", "elem_n4k/uniform", "rel_err_max")]["value"]
    assert 5e-5 < hybrid <= 1e-4  # the degree-3 polynomial's error, seen through the 5/16 split


def test_attention_probe_counts_rescales():
    rows = _rows("softmax_online", ["triton_mufu_cond8", "triton_mufu"], ["b1h2s128d64"])
    frac = rows[("triton_mufu_cond8", "b1h2s128d64", "rescale_frac")]
    assert 0 < frac["value"] < 1 and frac["stats"]["kv_blocks"] == 2 * 4 * 4
    assert frac["stats"]["n"] == 2 * 4 * 4 and frac["stats"]["k"] == frac["stats"]["rescales"]
    assert ("triton_mufu", "b1h2s128d64", "rescale_frac") not in rows
    assert rows[("triton_mufu_cond8", "b1h2s128d64", "tflops")]["status"] == "ok"


def test_wrong_exp2_fails_correctness():
    """A polynomial of degree 1 labelled as degree 3 is caught against the degree-3 tolerance."""
    from dataclasses import replace

    from runners.correctness import ReferenceCache, check
    from suite.registry import get
    from suite.spec import implementation

    tech = get("exp_approx")
    impl = tech.impl("triton_poly3")
    wrong = replace(impl, args={**impl.args, "degree": 1})
    v = check(tech, impl, tech.case("sum_t4_n4k"), implementation(wrong), "cpu", [1], ReferenceCache())
    assert not v.ok and "tolerance" in v.message
