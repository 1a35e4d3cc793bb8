"""The O launch that merges attention's partials itself (suite/lib/decode_o_merge.py), on the CPU under the
interpreter: the step agrees with the per-launch step to fp32 rounding (another order of sums), a replay does
not accumulate into the residual, its greedy tokens agree with the oracle, and what it refuses."""
import os

os.environ.setdefault("TRITON_INTERPRET", "1")

import pytest  # noqa: E402
import torch  # noqa: E402

from runners.correctness import rel_err  # noqa: E402
from suite.lib.decode_o_merge import rows_per_program  # noqa: E402
from suite.techniques.decode_step import TINY  # noqa: E402
from suite.techniques.decode_step import reference as R  # noqa: E402
from suite.techniques.decode_step.probe import greedy  # noqa: E402
from suite.techniques.decode_step.triton_step import run as fused  # noqa: E402

P = {**TINY, "kv": 48}


@pytest.mark.parametrize("cfg", [{}, {"pdl_kinds": ("attention", "o_proj"), "fuse_embed": True},
                                 {"attn_part_bf16": True}, {"tune": {"o_merge": {"target_programs": 8}}}])
def test_o_with_the_merge_gives_the_per_launch_step_to_fp32_rounding(cfg):
    """Two splits (of 32 and 16 slots, in tiles of 16), so the merge weights them; one row block per KV head,
    or four (target_programs 8 over 2 KV heads: 16 of the 64 rows each)."""
    cfg = {"block_s": 16, "max_split": 2, **cfg}
    want = torch.full((P["vocab"],), float("nan"))
    fused(want, **R.make_inputs(P, 11, "cpu"), mma_attention=True, **cfg)
    inp = R.make_inputs(P, 11, "cpu")
    outs = []
    for _ in range(2):  # the attention launch re-seeds the residual the adds go into
        outs.append(torch.full((P["vocab"],), float("nan")))
        fused(outs[-1], **inp, mma_attention=True, o_merge=True, **cfg)
    assert not torch.isnan(outs[0]).any()
    assert rel_err(outs[0], want) < 1e-5
    assert rel_err(outs[1], outs[0]) < 1e-6
    ref = R.reference(**R.make_inputs(P, 11, "cpu"))
    assert rel_err(outs[0], ref) < 0.5 * rel_err(R.lowp_eager(**R.make_inputs(P, 11, "cpu")), ref)


def test_o_with_the_merge_keeps_the_oracles_greedy_tokens():
    g = greedy(lambda out, **kw: fused(out, **kw, mma_attention=True, o_merge=True), P, seed=3, device="cpu",
               steps=3)
    assert g["matches"] == g["steps"] == 3 and g["first_mismatch"] is None


def test_o_with_the_merge_needs_the_tensor_core_attention_and_its_own_launch():
    with pytest.raises(AssertionError, match="o_merge"):
        fused(torch.empty(P["vocab"]), **R.make_inputs(P, 0, "cpu"), o_merge=True)
    with pytest.raises(AssertionError, match="o_merge"):
        fused(torch.empty(P["vocab"]), **R.make_inputs(P, 0, "cpu"), mma_attention=True, o_merge=True,
              fuse_mlp=True)


@pytest.mark.parametrize("n,per_head,want", [(2048, 16, 128), (2048, 32, 64), (2048, 1, 2048), (2048, 24, 128),
                                             (64, 100, 1)])
def test_rows_per_program_leaves_about_the_asked_row_blocks_per_head(n, per_head, want):
    assert rows_per_program(n, per_head) == want
