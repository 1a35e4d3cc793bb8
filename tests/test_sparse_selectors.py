"""Selectors: valid selections of equal budget, accepted by the kernel and a FlexAttention BlockMask;
exact top-k is exact; Morton codes are the page's; the cost model is the page's table."""
import os

os.environ.setdefault("TRITON_INTERPRET", "1")

import pytest  # noqa: E402
import torch  # noqa: E402

from suite.lib.block_sparse import (  # noqa: E402
    budget_counts, check_blocks, dense_block_mask, flex_block_mask, masked_attention)
from suite.lib.selectors import SELECTORS, block_mass, select  # noqa: E402
from suite.techniques.sparse_selectors.reference import lowp_chance, make_inputs, reference  # noqa: E402

PARAMS = {"b": 1, "hq": 4, "hkv": 2, "s": 1024, "d": 64, "block": 64, "density": 0.25,
          "topics": 8, "signal": 2.0}


@pytest.fixture(scope="module")
def inputs():
    return make_inputs(PARAMS, 7, "cpu")


@pytest.mark.parametrize("name", SELECTORS)
def test_selector_is_valid_with_the_shared_budget(name, inputs):
    num, idx = select(name, inputs["q"], inputs["k"], 64, 0.25)
    check_blocks(num, idx)
    assert torch.equal(num[0, 0].long(), budget_counts(16, 16, 0.25))


@pytest.mark.parametrize("name", SELECTORS)
def test_selector_beats_chance_on_topic_structured_inputs(name, inputs):
    ref = reference(**inputs)
    mine = dense_block_mask(*select(name, inputs["q"], inputs["k"], 64, 0.25)).double()
    chance = lowp_chance(**inputs)
    dist = lambda m: (m - ref).norm() / ref.norm()
    assert dist(mine) < dist(chance)


def test_exact_topk_keeps_the_heaviest_blocks(inputs):
    q, k = inputs["q"], inputs["k"]
    mass = block_mass(q, k, 64, torch.float64)
    sel = dense_block_mask(*select("exact_topk", q, k, 64, 0.25))
    # Any unselected causal off-diagonal block carries no more mass than the lightest selected one.
    causal = torch.tril(torch.ones(16, 16, dtype=torch.bool), diagonal=-1)
    for h in range(2):
        for m in range(16):
            kept = sel[0, h, m] & causal[m]
            left = ~sel[0, h, m] & causal[m]
            if kept.any() and left.any():
                assert mass[0, h, m][left].max() <= mass[0, h, m][kept].min() * (1 + 1e-3)
    # The mass per row sums to the number of queries x heads in the block.
    assert torch.allclose(mass.sum(-1), torch.full_like(mass.sum(-1), 64.0 * 2))


@pytest.mark.parametrize("name", SELECTORS)
def test_selection_runs_in_our_kernel_and_in_flex_alike(name, inputs):
    from torch.nn.attention.flex_attention import flex_attention

    from suite.lib.block_sparse_kernel import block_sparse_attention

    q, k = inputs["q"][:, :, :256], inputs["k"][:, :, :256]
    v = torch.randn_like(k)
    num, idx = select(name, q, k, 64, 0.5)
    ref = masked_attention(q, k, v, num, idx, 64, "fp64")
    ours = block_sparse_attention(q, k, v, num, idx, 64)
    bm = flex_block_mask(num, idx, 64, 4, 256, 256)
    flex = flex_attention(q.float(), k.float(), v.float(), block_mask=bm, enable_gqa=True)
    err = lambda o: ((o.double() - ref).norm() / ref.norm()).item()
    assert err(ours) < 1e-2 and err(flex) < 1e-5


def test_morton_codes_match_the_page_and_round_trip():
    from suite.lib.morton import morton_decode2, morton_encode2, morton_encode3

    r, c = torch.meshgrid(torch.arange(4), torch.arange(4), indexing="ij")
    page = torch.tensor([[0, 1, 4, 5], [2, 3, 6, 7], [8, 9, 12, 13], [10, 11, 14, 15]])
    assert torch.equal(morton_encode2(r, c), page)
    codes = torch.arange(1 << 12)
    rr, cc = morton_decode2(codes)
    assert torch.equal(morton_encode2(rr, cc), codes)
    pts = torch.rand(100, 3)
    z = morton_encode3(pts, 10)
    assert z.min() >= 0 and z.max() < (1 << 30)
    assert morton_encode3(torch.tensor([[0.9999, 0.9999, 0.9999]]), 10).item() == (1 << 30) - 1


def test_attn_cost_reproduces_the_page_table():
    from suite.techniques.prefill_cost_model.common import measured_saving, predicted, table

    rows = {p: predicted(p, g) for _, p, g in
            [("chat", 600, 400), ("rag", 8000, 500), ("doc", 64000, 1000), ("repo", 500000, 2000)]}
    assert [round(r["saving"], 1) for r in rows.values()] == [1.5, 4.9, 7.8, 9.3]
    assert [round(r["prefill_share"] * 100) for r in rows.values()] == [36, 89, 97, 99]
    assert "3.380e+05" in table() and "1.350e+10" in table()
    assert measured_saving(10.0, 1.0, 0.0) == pytest.approx(10.0)
