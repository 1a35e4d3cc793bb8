"""The claim status rule, the bands, the arithmetic checks and the ledger's integrity (no database)."""
import math

import pytest

from suite.claims import arithmetic as ar
from suite.claims.registry import all_claims
from suite.claims.spec import (CONTRADICTED, MEASURED_BY, NOT_REPRODUCED, REPRODUCED, Arithmetic, Band, Claim,
                               Custom, Selector, about, at_least, at_most, judge, rounded, stated, up_to)
from suite.spec import resolve


@pytest.mark.parametrize("band,value,status", [
    (about(28), 31.25, REPRODUCED),          # +-15%: [23.8, 32.2]
    (about(28), 33.0, CONTRADICTED),
    (about(28), 23.0, CONTRADICTED),
    (stated(2), 1.78, CONTRADICTED),         # +-10%: [1.8, 2.2]
    (stated(2), 1.9, REPRODUCED),
    (rounded(1.5, 0.05), 1.479, REPRODUCED),
    (rounded(1.5, 0.05), 1.44, CONTRADICTED),
    (up_to(3), 2.8, REPRODUCED),             # >= 90% of a best case
    (up_to(3), 1.4, NOT_REPRODUCED),         # a best case not reached is not a contradiction
    (up_to(3), 3.4, REPRODUCED),
    (up_to(3), 9.0, CONTRADICTED),           # far above the stated best case: the figure is not the best
    (at_most(2.0), 1.56, REPRODUCED),
    (at_most(2.0), 2.01, CONTRADICTED),
    (at_least(0.9, weak=True), 0.5, NOT_REPRODUCED),
    (at_least(0.9), 0.5, CONTRADICTED),
    (Band(None, 9.7e-5, "above"), 1.2e-4, NOT_REPRODUCED),
    (Band(7.9e-5, 9.7e-5, "above"), 5.0e-5, CONTRADICTED),  # two-sided: far better than stated contradicts
    (Band(None, 9.7e-5, "above"), 8.0e-5, REPRODUCED),
    (Band(1.0, 2.0, "below"), 2.5, CONTRADICTED),  # the weak side is only the side named
])
def test_judge(band, value, status):
    assert judge(value, band) == status


def test_band_rejects_nonsense():
    with pytest.raises(ValueError):
        Band(2.0, 1.0)
    with pytest.raises(ValueError):
        Band(1.0, 2.0, weak="sideways")


def test_claim_needs_band_for_a_check_and_known_measured_by():
    sel = Selector("t", "tflops", "x")
    with pytest.raises(ValueError, match="band"):
        Claim("c", "s", 1, "x", "src", "vendor", "any", "sec", None, sel)
    with pytest.raises(ValueError, match="measured_by"):
        Claim("c", "s", 1, "x", "src", "marketing", "any", "sec")


@pytest.mark.parametrize("workload,saving,share", [
    ("chat", 1.5, 36), ("rag", 4.9, 89), ("doc", 7.8, 97), ("repo", 9.3, 99)])
def test_prefill_table_recomputed(workload, saving, share):
    s, _ = ar.prefill_saving(workload, 0.10)
    p, _ = ar.prefill_share(workload)
    assert round(s, 1) == saving and round(p) == share


def test_prefill_saving_with_full_sparsity_is_one_and_ceiling_exceeds_any_saving():
    assert ar.prefill_saving("doc", 1.0)[0] == pytest.approx(1.0)
    assert ar.prefill_ceiling("doc")[0] > ar.prefill_saving("doc", 0.01)[0] > ar.prefill_saving("doc")[0]


def test_rope_and_bf16_arithmetic():
    assert ar.rope_table()[0] == pytest.approx(16.777216)
    assert ar.rope_table(bytes_per_value=4)[0] == pytest.approx(67.108864)
    assert ar.rope_table(bytes_per_value=2)[0] == pytest.approx(33.554432)
    assert ar.bf16_spacing(100_000)[0] == 512 and ar.bf16_spacing(1.5)[0] == 2 ** -7


def test_morton_codes_and_tiles():
    assert [ar.morton(x, y) for y in range(4) for x in range(4)] == [0, 1, 4, 5, 2, 3, 6, 7, 8, 9, 12, 13,
                                                                     10, 11, 14, 15]  # the page's grid
    assert ar.morton_tile_span()[0] == 4
    assert ar.rowmajor_tile_rows()[0] == 2


def test_hardware_arithmetic():
    assert ar.peak_ratio("GB200", "bf16", "fp32")[0] == pytest.approx(31.25)
    assert ar.utilisation(1605, "B200")[0] == pytest.approx(71.33, abs=0.01)
    # Both sides pay their scales: MXFP8 8 + 8/32 bits, NVFP4 4 + 8/16, MXFP4 4 + 8/32.
    assert ar.fp4_weight_bytes_ratio("MXFP8", "NVFP4")[0] == pytest.approx(8.25 / 4.5)
    assert ar.fp4_weight_bytes_ratio("MXFP8", "MXFP4")[0] == pytest.approx(8.25 / 4.25)
    assert ar.fp4_weight_bytes_ratio("FP8", "NVFP4")[0] == pytest.approx(8 / 4.5)
    # Every generation pair: A100 -> H100 is 3.17x, H100 -> B200 2.27x; the farthest from 2x is the value.
    value, detail = ar.generation_ratios("bf16")
    assert value == pytest.approx(989.5 / 312) and "B200 / H100 = 2.274" in detail
    assert ar.nsa_kv_ratio()[0] == pytest.approx(65536 / 5632)


def _arith_status(cid):
    c = next(c for c in all_claims() if c.id == cid)
    value, _ = resolve(c.check.target)(**c.check.kwargs)
    return judge(value, c.band)


@pytest.mark.parametrize("cid,status", [
    ("prefill_saving_chat_10pct", REPRODUCED), ("prefill_saving_repo_10pct", REPRODUCED),
    ("rope_table_67mb_fp32", REPRODUCED), ("rope_table_34mb_fp16", REPRODUCED),
    ("bf16_28x_fp32_gb200", REPRODUCED), ("fa4_71pct_utilisation_b200", REPRODUCED),
    ("fp4_2x_fp8_weight_bytes", REPRODUCED), ("rowmajor_2x2_tile_4_rows", CONTRADICTED),
    ("tensor_core_2x_per_generation", CONTRADICTED),
])
def test_ledger_arithmetic_statuses(cid, status):
    assert _arith_status(cid) == status


def test_ledger_integrity():
    claims = all_claims()
    ids = [c.id for c in claims]
    assert len(ids) == len(set(ids)) and len(ids) >= 45
    for c in claims:
        assert c.measured_by in MEASURED_BY and c.source and c.statement and c.unit
        if isinstance(c.check, Arithmetic):
            assert c.measured_by == "arithmetic" or c.note
            value, detail = resolve(c.check.target)(**c.check.kwargs)
            assert math.isfinite(value) and detail
        if c.projection:
            resolve(c.projection)  # importable
        if c.runs_on and c.check is None:
            assert c.projection, f"{c.id}: hardware-bound claim without a projection (or its reason)"


def test_every_claim_id_a_technique_lists_exists():
    from suite.registry import techniques

    known = {c.id for c in all_claims()}
    for tech in techniques().values():
        missing = set(tech.claims) - known
        assert not missing, f"{tech.name} lists unknown claims {sorted(missing)}"


def test_the_page_figures_named_by_the_issue_are_all_in_the_ledger():
    figures = {(c.figure if not isinstance(c.figure, tuple) else c.figure) for c in all_claims()}
    for f in (1605, 71, 1.3, 2.7, 28, 3, -110, 111, (1.2, 6.7), 12.5, 78, 250, 100, 96, 52, 12e6, 2, 3.5,
              16.8, 67, 34, 1.5, 4.9, 7.8, 9.3):
        assert f in figures, f


def _measured(**kw) -> Claim:
    base = dict(id="c", statement="s", figure=1, unit="x", source="src", measured_by="authors", hardware="H100",
                section="sec", band=stated(1), check=Selector("t", "tflops", "x"), runs_on=("H100",))
    return Claim(**{**base, **kw})


def test_one_hardware_rule_for_measured_claims():
    _measured()  # an H100 claim judged on H100 runs
    with pytest.raises(ValueError, match="analog"):  # an H200 is not an H100: it can only be the analog
        _measured(runs_on=("H100", "H200"))
    with pytest.raises(ValueError, match="no GPUs"):  # a B200 claim must say which runs count
        _measured(hardware="B200 (FA4's target)", runs_on=())
    _measured(hardware="any", runs_on=())  # numerics: every run counts
    with pytest.raises(ValueError, match="arithmetic"):  # a timing is not arithmetic
        _measured(measured_by="arithmetic", hardware="any", runs_on=())


def test_every_measured_claim_in_the_ledger_follows_the_hardware_rule():
    for c in all_claims():
        if isinstance(c.check, (Selector, Custom)):
            assert c.hardware == "any" or c.runs_on, c.id
            assert all(h.lower() in c.hardware.lower() for h in c.runs_on), c.id
            assert c.measured_by != "arithmetic", c.id
    by_id = {c.id: c for c in all_claims()}
    assert by_id["fa2_35pct_h100"].runs_on == ("H100",) and by_id["fa2_35pct_h100"].analog is not None
    assert by_id["exp2_hybrid_mufu_fma_throughput"].runs_on == ("B200",)
    doc = by_id["prefill_saving_doc_measured"]
    assert (doc.measured_by, doc.hardware, doc.runs_on) == ("ours", "H200", ("H200",))


def test_bands_are_two_sided_where_the_page_states_a_value():
    one_sided_ok = {"bf16x9_fp32_comparable", "exp2_hybrid_mufu_fma_throughput", "fa4_conditional_rescale",
                    "prefill_chat_caps_under_2x", "rope_bf16_angle_at_100k", "bf16x6_as_x9_in_range",
                    "w4a16_fused_beats_unfused", "nvfp4_lower_error_than_mxfp4", "per_tensor_useless_4bit"}  # wordings without a value: 'comparable', 'beats', 'under 2x', ...
    # Norms, activations, RoPE: 'wins', 'well under', 'much cheaper', 'costs nothing', 'garbage', 'a full round trip',
    # 'nearly all', and issue 17's 85% target (a floor, not a page value)
    one_sided_ok |= {"fused_norm_85pct_copy_bandwidth", "fused_norm_beats_unfused", "rmsnorm_saves_a_pass",
                     "gelu_tanh_under_quantization_noise", "gelu_tanh_much_cheaper", "fused_activation_epilogue",
                     "gate_up_merged_one_gemm", "rope_wrong_layout_gross", "rope_bf16_angles_measured",
                     "rope_fp32_angles_enough_at_100k", "rope_neox_vectorises", "rope_standalone_memory_bound",
                     "rope_fused_qkv_removes_cost", "swiglu_fused_one_pass", "prefill_last_ffn_skip_exact"}
    one_sided_ok |= {"decode_launches_are_overhead"}  # 'each launch is fixed overhead': no value
    one_sided_ok |= {"selector_5x_dense_keeps_needles"}  # issue 19's 5x target: a floor, not a page value
    # Sparse GEMM, Monarch: 'reliably slower', 'buys it back', 'fast where ... is not', 'not for free'
    one_sided_ok |= {"sparse_moderate_unstructured_slower", "sparse_block_buys_it_back",
                     "monarch_vs_csr_same_density", "monarch_not_free_from_dense"}
    for c in all_claims():
        if c.band is not None and c.id not in one_sided_ok:
            assert c.band.lo is not None and c.band.hi is not None, c.id


def test_generation_claim_is_stated_over_every_pair_with_datasheets():
    """Every GPU of one generation against every GPU of the next; the farthest pair from 2x decides."""
    from suite.claims.arithmetic import generation_ratios
    from suite.claims.datasheets import GENERATIONS

    value, detail = generation_ratios("bf16")
    pairs = [(o, n) for (_, olds), (_, news) in zip(GENERATIONS, GENERATIONS[1:]) for o in olds for n in news]
    assert len(pairs) == 8 and all(f"{n} / {o} = " in detail for o, n in pairs)
    assert value == pytest.approx(989.5 / 312) and "farthest from 2x: H100 / A100" in detail
    assert "B200 / H100 = 2.274" in detail and "GB200 / H200 = 2.527" in detail

