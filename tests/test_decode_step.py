"""decode_step on the CPU (Triton under the interpreter): the fused step against the fp32 oracle and
the bf16 eager step (logits and the K/V slot it writes), split-KV attention with several splits and
chunks wholly past pos, greedy agreement over consecutive steps, and the ceiling_share row."""
import os

os.environ.setdefault("TRITON_INTERPRET", "1")

import math  # noqa: E402

import pytest  # noqa: E402
import torch  # noqa: E402

from runners.correctness import ReferenceCache, rel_err  # noqa: E402
from runners.job import run_job  # noqa: E402
from runners.run import SMOKE_PROTOCOL  # noqa: E402
from suite.lib.decode_attention import DecodeAttention  # noqa: E402
from suite.registry import get  # noqa: E402
from suite.spec import Technique  # noqa: E402
from suite.techniques.decode_step import TINY  # noqa: E402
from suite.techniques.decode_step import reference as R  # noqa: E402
from suite.techniques.decode_step.probe import greedy  # noqa: E402
from suite.techniques.decode_step.torch_eager import run as eager  # noqa: E402
from suite.techniques.decode_step.triton_persistent import run as persistent  # noqa: E402
from suite.techniques.decode_step.triton_step import run as fused  # noqa: E402

P = {**TINY, "kv": 48}


@pytest.mark.parametrize("seed,mma", [(0, False), (1, False), (2, True)])
def test_fused_step_matches_the_oracle_and_writes_the_same_cache_slot(seed, mma):
    ref = R.reference(**R.make_inputs(P, seed, "cpu"))
    lowp_err = rel_err(R.lowp_eager(**R.make_inputs(P, seed, "cpu")), ref)
    ours, base = R.make_inputs(P, seed, "cpu"), R.make_inputs(P, seed, "cpu")
    before = {n: ours[n].clone() for n in ("k_cache", "v_cache")}
    out = torch.full((P["vocab"],), float("nan"))
    fused(out, **ours, mma_attention=mma)
    eager(torch.empty(P["vocab"]), **base)
    assert rel_err(out, ref) < 0.5 * lowp_err  # fp32 residual stream and accumulators
    pos = P["kv"] - 1
    for name in ("k_cache", "v_cache"):
        assert torch.equal(ours[name][:, :, :pos], before[name][:, :, :pos])
        assert not torch.equal(ours[name][:, :, pos], before[name][:, :, pos])
        a, b = ours[name][:, :, pos].float(), base[name][:, :, pos].float()  # one bf16 rounding apart
        assert (a - b).abs().max() <= 2 ** -6 * b.abs().max()


def test_fused_embedding_and_prefetch_schedule_leave_the_step_bit_identical():
    outs = []
    for cfg in ({}, {"fuse_embed": True, "pf_wo": True, "pf_gu_mb": (1, 1, 1), "pf_qkv_next": True,
                     "evict": "evict_first"}):
        inp = R.make_inputs(P, 4, "cpu")
        outs.append(torch.full((P["vocab"],), float("nan")))
        fused(outs[-1], **inp, mma_attention=True, **cfg)
    assert torch.equal(outs[0], outs[1])


@pytest.mark.parametrize("transposed,rows", [(False, 16), (True, 32)])
def test_mlp_as_one_launch_adds_down_into_the_residual_as_the_two_launches_do(transposed, rows):
    """The fused MLP (atomic partial sums of down) agrees with gate/up + down to fp32 rounding, and a
    second call gives the same logits (the O launch re-seeds the sum it adds into)."""
    inp = R.make_inputs(P, 6, "cpu")
    want = torch.full((P["vocab"],), float("nan"))
    fused(want, **R.make_inputs(P, 6, "cpu"), mma_attention=True)
    wd_t = inp["wd"].transpose(1, 2).contiguous() if transposed else None
    outs = []
    for _ in range(2):
        outs.append(torch.full((P["vocab"],), float("nan")))
        fused(outs[-1], **inp, mma_attention=True, fuse_mlp=True, wd_t=wd_t, tune={"mlp": {"rows": rows}})
    assert rel_err(outs[0], want) < 1e-5
    assert rel_err(outs[1], outs[0]) < 1e-6  # replays do not accumulate


@pytest.mark.parametrize("kv", [48, 200])
def test_persistent_step_stage_by_stage_matches_the_fused_step(kv):
    p = {**TINY, "kv": kv}
    ours, base = R.make_inputs(p, 5, "cpu"), R.make_inputs(p, 5, "cpu")
    want = torch.full((p["vocab"],), float("nan"))
    fused(want, **base, mma_attention=True)
    out = torch.full((p["vocab"],), float("nan"))
    persistent(out, **ours, rows={"GU": 4})  # 4 programs: several blocks, and splits, per program
    assert rel_err(out, want) < 1e-5
    assert torch.equal(ours["k_cache"], base["k_cache"]) and torch.equal(ours["v_cache"], base["v_cache"])


def _attention(q, kc, vc, pos, hq):
    hkv, S, D = kc.shape
    s = (q.view(hkv, hq // hkv, D).double() @ kc.double().transpose(1, 2)) / math.sqrt(D)
    s[..., pos + 1:] = float("-inf")
    return (torch.softmax(s, -1) @ vc.double()).reshape(-1)


@pytest.mark.parametrize("mma", [False, True])
@pytest.mark.parametrize("S,pos", [(200, 199), (200, 40), (200, 0), (70, 69)])
def test_split_kv_attention_merges_splits_and_skips_chunks_past_pos(S, pos, mma):
    hq, hkv, D = 8, 2, 16
    g = torch.Generator().manual_seed(S + pos)
    q = torch.randn(hq * D, generator=g)
    kc = torch.randn(hkv, S, D, generator=g).to(torch.bfloat16)
    vc = torch.randn(hkv, S, D, generator=g).to(torch.bfloat16)
    attn = DecodeAttention(hq, hkv, S, D, "cpu", block_s=16 if not mma else 32, mma=mma)
    assert attn.nsplit > 1
    want = _attention(q, kc, vc, pos, hq)
    for _ in range(2):  # the merge counters are back at zero for the next call
        out = torch.full((hq * D,), float("nan"))
        attn(out, q, kc, vc, torch.tensor([pos]))
        assert rel_err(out, want) < (1e-2 if mma else 1e-5)  # mma: q and p rounded to bf16
    assert attn.count.eq(0).all()


@pytest.mark.parametrize("mma", [False, True])
@pytest.mark.parametrize("S,pos", [(200, 199), (200, 40), (70, 0)])
def test_merge_in_groups_of_splits_gives_the_merge_of_all_at_once(S, pos, mma):
    """merge=1: the last split reads the partials one split at a time (fewer registers); the output
    matches the merge that loads them all to fp32 rounding, and the counters return to zero."""
    hq, hkv, D = 8, 2, 16
    g = torch.Generator().manual_seed(3 * S + pos)
    q = torch.randn(hq * D, generator=g)
    kc = torch.randn(hkv, S, D, generator=g).to(torch.bfloat16)
    vc = torch.randn(hkv, S, D, generator=g).to(torch.bfloat16)
    attn = DecodeAttention(hq, hkv, S, D, "cpu", block_s=16 if not mma else 32, mma=mma)
    assert attn.nsplit == 2
    outs = []
    for merge in (0, 1, 2, 1):
        outs.append(torch.full((hq * D,), float("nan")))
        attn(outs[-1], q, kc, vc, torch.tensor([pos]), merge=merge)
    assert torch.isfinite(outs[1]).all() and attn.count.eq(0).all()
    assert torch.equal(outs[1], outs[3]) and torch.equal(outs[0], outs[2])
    assert rel_err(outs[1], outs[0]) < 1e-6
    assert rel_err(outs[1], _attention(q, kc, vc, pos, hq)) < (1e-2 if mma else 1e-5)


@pytest.mark.parametrize("mma", [False, True])
def test_bf16_partials_merge_within_bf16_rounding_of_the_fp32_ones(mma):
    """part_dtype bf16: each split's partial is rounded once to bf16 before the merge, so the output moves
    by about bf16's unit roundoff from the fp32-partials output, and the counters return to zero."""
    hq, hkv, D, S, pos = 8, 2, 16, 200, 150
    g = torch.Generator().manual_seed(11)
    q = torch.randn(hq * D, generator=g)
    kc = torch.randn(hkv, S, D, generator=g).to(torch.bfloat16)
    vc = torch.randn(hkv, S, D, generator=g).to(torch.bfloat16)
    outs = []
    for dt in (torch.float32, torch.bfloat16):
        attn = DecodeAttention(hq, hkv, S, D, "cpu", block_s=16 if not mma else 32, mma=mma, part_dtype=dt)
        outs.append(torch.full((hq * D,), float("nan")))
        attn(outs[-1], q, kc, vc, torch.tensor([pos]))
        assert attn.part_o.dtype == dt and attn.count.eq(0).all()
    err = rel_err(outs[1], outs[0])
    assert 0 < err < 2 ** -6  # elementwise 2^-9 per partial; the weighted sum of signed V values cancels
    assert rel_err(outs[1], _attention(q, kc, vc, pos, hq)) < (1e-2 if mma else 4e-3)


@pytest.mark.parametrize("pos", [40, 69])
def test_early_kv_loads_ignore_whatever_the_slots_past_pos_hold(pos):
    """The tensor-core kernel loads K/V without waiting for pos: NaN and inf past pos change nothing."""
    hq, hkv, D, S = 8, 2, 16, 70
    g = torch.Generator().manual_seed(pos)
    q = torch.randn(hq * D, generator=g)
    kc = torch.randn(hkv, S, D, generator=g).to(torch.bfloat16)
    vc = torch.randn(hkv, S, D, generator=g).to(torch.bfloat16)
    attn = DecodeAttention(hq, hkv, S, D, "cpu", block_s=32, mma=True)
    outs = []
    for early, junk in ((False, False), (True, False), (True, True)):
        k, v = kc.clone(), vc.clone()
        if junk:
            k[:, pos + 1:], v[:, pos + 1:] = float("nan"), float("inf")
        outs.append(torch.full((hq * D,), float("nan")))
        attn(outs[-1], q, k, v, torch.tensor([pos]), early=early)
    assert torch.isfinite(outs[0]).all()
    assert torch.equal(outs[0], outs[1]) and torch.equal(outs[1], outs[2])


@pytest.mark.parametrize("S,pos,block_s,max_split", [(70, 69, 32, 64), (70, 40, 32, 64), (200, 100, 16, 4),
                                                     (200, 0, 32, 64)])
def test_attention_with_its_first_tile_loaded_before_the_wait_is_bit_identical(S, pos, block_s, max_split):
    """pre: each split's first tile of the slots before pos is loaded before the wait for the previous
    launch and slot pos patched in after it (by every split, or, patch_if, behind a branch by the split
    holding it); with several tiles a split (max_split 4) and pos inside, at the start of or past a split's
    first tile, and NaN / inf past pos, the output is the same bits."""
    hq, hkv, D = 8, 2, 16
    g = torch.Generator().manual_seed(S * pos + block_s)
    q = torch.randn(hq * D, generator=g)
    kc = torch.randn(hkv, S, D, generator=g).to(torch.bfloat16)
    vc = torch.randn(hkv, S, D, generator=g).to(torch.bfloat16)
    attn = DecodeAttention(hq, hkv, S, D, "cpu", block_s=block_s, mma=True, max_split=max_split)
    assert attn.nsplit > 1 and (max_split > 4 or attn.chunk > block_s)
    outs = []
    for pre, junk, patch_if in ((False, False, False), (True, False, False), (True, True, False), (True, True, True)):
        k, v = kc.clone(), vc.clone()
        if junk:
            k[:, pos + 1:], v[:, pos + 1:] = float("nan"), float("inf")
        outs.append(torch.full((hq * D,), float("nan")))
        attn(outs[-1], q, k, v, torch.tensor([pos]), pre=pre, pdl=pre, patch_if=patch_if)
    assert torch.isfinite(outs[0]).all()
    assert all(torch.equal(outs[0], o) for o in outs[1:])
    assert rel_err(outs[1], _attention(q, kc, vc, pos, hq)) < 1e-2  # q and p rounded to bf16


@pytest.mark.parametrize("kinds", [("attention",), ("attention", "o_proj"), ("qkv", "attention", "o_proj",
                                                                         "gate_up", "down", "head")])
def test_launches_started_early_by_kind_leave_the_step_bit_identical(kinds):
    """pdl_kinds (per-kind programmatic dependent launch, attention's first tile before its wait):
    on the CPU griddepcontrol is off, but the pre-loaded attention path runs and must give the same
    logits and K/V cache as the step without it."""
    want, base = torch.full((P["vocab"],), float("nan")), R.make_inputs(P, 7, "cpu")
    fused(want, **base, mma_attention=True, fuse_embed=True)
    out, inp = torch.full((P["vocab"],), float("nan")), R.make_inputs(P, 7, "cpu")
    fused(out, **inp, mma_attention=True, fuse_embed=True, pdl_kinds=kinds)
    assert torch.equal(out, want)
    assert torch.equal(inp["k_cache"], base["k_cache"]) and torch.equal(inp["v_cache"], base["v_cache"])


_KINDS = ("qkv", "o_proj", "gate_up", "down", "head")


@pytest.mark.parametrize("form,exact", [({"pipe": True}, True), ({"pipe": True, "x2d": True}, True),
                                        ({"x2d": True}, True), ({"pipe": 2, "x2d": True}, True), ({"pre": 2}, True),
                                        ({"pipe": 1, "pre": 2}, True), ({"pipe": 2, "x2d": True, "pre": 2}, True),
                                        ({"pipe": True, "x2d": True, "acc2d": True}, False),
                                        ({"acc2d": True}, False)])
def test_gemv_loop_forms_give_the_same_step(form, exact):
    """The GEMVs' loop forms (decode_gemv._rows_dot: next chunk first, x in the tile's layout, sums kept per
    column, two chunks before the wait) on every launch kind, each GEMV in 4-8 chunks of 16 columns: pipe (one or
    two chunks ahead), x2d and pre sum the same products in the same order, so the logits and the cache are
    bit-identical; acc2d reorders the sums (fp32 rounding)."""
    tune = {k: {"block_k": 16} for k in _KINDS}
    want, base = torch.full((P["vocab"],), float("nan")), R.make_inputs(P, 8, "cpu")
    fused(want, **base, mma_attention=True, fuse_embed=True, tune=tune)
    out, inp = torch.full((P["vocab"],), float("nan")), R.make_inputs(P, 8, "cpu")
    fused(out, **inp, mma_attention=True, fuse_embed=True, tune={k: {**v, **form} for k, v in tune.items()})
    if exact:
        assert torch.equal(out, want)
        assert torch.equal(inp["k_cache"], base["k_cache"]) and torch.equal(inp["v_cache"], base["v_cache"])
    else:
        assert not torch.equal(out, want)  # another order of fp32 sums: the form ran
        assert rel_err(out, want) < 1e-5
        assert rel_err(out, R.reference(**R.make_inputs(P, 8, "cpu"))) < 0.5 * rel_err(
            R.lowp_eager(**R.make_inputs(P, 8, "cpu")), R.reference(**R.make_inputs(P, 8, "cpu")))


def test_greedy_tokens_agree_with_the_oracle_over_consecutive_steps():
    g = greedy(fused, P, seed=3, device="cpu", steps=4)
    assert g["matches"] == g["steps"] == 4 and g["first_mismatch"] is None


def test_job_adds_the_share_of_the_measured_copy_bandwidth():
    tech = get("decode_step")
    case = tech.case("tiny_kv80")
    rows = run_job(tech, tech.impl("torch_eager"), case, "cpu", 7, SMOKE_PROTOCOL, ReferenceCache())
    by = {r["metric"]: r for r in rows}
    assert {"latency_ms", "gbps", "rel_err", "ceiling_share", "greedy_match_frac"} <= set(by)
    share = by["ceiling_share"]
    assert share["status"] == "ok" and share["stats"]["ceiling_gbps"] > 0
    assert share["value"] == pytest.approx(by["gbps"]["value"] / share["stats"]["ceiling_gbps"], rel=1e-9)


def test_a_ceiling_needs_a_bytes_formula():
    tech = get("decode_step")
    with pytest.raises(ValueError, match="ceiling needs a bytes formula"):
        Technique(**{**tech.__dict__, "bytes": None, "work": {}, "metrics": tech.metrics[:1]})


@pytest.mark.parametrize("pf_kv", [("qkv:k", "qkv:v"), ("o_proj:k",), ("qkv:kv",)])
def test_a_kv_prefetch_entry_that_names_no_launch_or_cache_once_is_refused(pf_kv):
    from suite.techniques.decode_step.triton_step import _kv_prefetch

    k, v = torch.zeros(2, 1, 4, 2), torch.ones(2, 1, 4, 2)
    got = _kv_prefetch(("qkv:k", "down:v"), k, v)
    assert set(got) == {"qkv", "down"} and got["qkv"] is k and got["down"] is v
    with pytest.raises(ValueError, match="pf_kv entry"):
        _kv_prefetch(pf_kv, k, v)
