"""The one-launch work-item decode step (suite/lib/decode_dataflow.py) on the CPU, under the interpreter:
bit-identical to the per-launch fused step (logits and both caches), with tickets or launch order and
with several item sizes, its counters back at zero after every call, and greedy tokens as the oracle's."""
import os

os.environ.setdefault("TRITON_INTERPRET", "1")

import pytest  # noqa: E402
import torch  # noqa: E402

from runners.correctness import rel_err  # noqa: E402
from suite.techniques.decode_step import TINY  # noqa: E402
from suite.techniques.decode_step import reference as R  # noqa: E402
from suite.techniques.decode_step.probe import greedy  # noqa: E402
from suite.techniques.decode_step.triton_dataflow import plan  # noqa: E402
from suite.techniques.decode_step.triton_dataflow import run as dataflow  # noqa: E402
from suite.techniques.decode_step.triton_step import run as fused  # noqa: E402


@pytest.mark.parametrize("kv,opts", [
    (48, {}),
    (200, {"ticket": False, "head_launch": True}),
    (80, {"rows": {"QKV": 2, "O": 2, "GU": 8, "D": 1, "HEAD": 16}, "block_k": {"D": 32}}),
])
def test_dataflow_step_is_the_fused_step_and_leaves_its_counters_at_zero(kv, opts):
    p = {**TINY, "kv": kv}
    ours, base = R.make_inputs(p, 6, "cpu"), R.make_inputs(p, 6, "cpu")
    want = torch.full((p["vocab"],), float("nan"))
    fused(want, **base, mma_attention=True)
    pl = plan(ours["emb"], ours["wqkv"], ours["wo"], ours["wgu"], ours["k_cache"], **opts)
    for _ in range(2):  # a replay starts from the counters the last call left
        out = torch.full((p["vocab"],), float("nan"))
        dataflow(out, **ours, **opts)
        if "block_k" in opts:  # other K chunks: the same sums in another order
            assert rel_err(out, want) < 1e-5
        else:
            assert torch.equal(out, want)
        assert torch.equal(ours["k_cache"], base["k_cache"]) and torch.equal(ours["v_cache"], base["v_cache"])
        assert pl.sync.eq(0).all() and pl.count.eq(0).all() and pl.gave_up() == 0
    # more items than programs of one kind: several blocks per stage, splits per head
    assert pl.items["GU"] > 1 and pl.items["ATTN"] == p["kv_heads"] * pl.nsplit


def test_dataflow_greedy_tokens_agree_with_the_oracle():
    g = greedy(dataflow, {**TINY, "kv": 48}, seed=3, device="cpu", steps=3)
    assert g["matches"] == g["steps"] == 3 and g["first_mismatch"] is None
