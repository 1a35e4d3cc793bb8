"""The Triton MSA index selector picks exactly the torch msa_index selection (indices, order and
the unused tail alike), and its top-k breaks ties as topk_blocks' stable sort does."""
import os

os.environ.setdefault("TRITON_INTERPRET", "1")

import pytest  # noqa: E402
import torch  # noqa: E402

from suite.lib.block_sparse import budget_counts, check_blocks, topk_blocks  # noqa: E402
from suite.lib.msa_index_triton import topk_rows  # noqa: E402
from suite.lib.selectors import msa_fused, msa_index  # noqa: E402

# (B, Hq, Hkv, Sq, Sk, D, block, density): prefill, a GQA group of 4, decode-like question blocks
# over a longer cache (the needle probe's shape), KV block counts that are not powers of two.
SHAPES = [(1, 4, 2, 1024, 1024, 64, 64, 0.25), (2, 8, 2, 384, 384, 128, 128, 0.5),
          (1, 4, 1, 128, 2560, 128, 128, 0.1), (1, 4, 2, 192, 1344, 64, 64, 0.1),
          (1, 2, 2, 320, 320, 32, 16, 0.3)]


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "b{}_hq{}_kv{}_sq{}_sk{}_d{}_blk{}_{}".format(*s))
def test_msa_fused_selects_what_msa_index_selects(shape):
    b, hq, hkv, sq, sk, d, blk, dens = shape
    seed = int(torch.randint(0, 2**31 - 1, ()))  # fresh inputs each run, the seed in the message
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(b, hq, sq, d, generator=g).to(torch.bfloat16)
    scale = torch.rand(b, hkv, sk, 1, generator=g) * 3  # keys of uneven norms
    k = (torch.randn(b, hkv, sk, d, generator=g) * scale).to(torch.bfloat16)
    want_num, want_idx = msa_index(q, k, blk, dens)
    num, idx = msa_fused(q, k, blk, dens)
    check_blocks(num, idx)
    assert torch.equal(num, want_num), f"seed {seed}"
    assert torch.equal(idx, want_idx), f"seed {seed}: {int((idx != want_idx).any(-1).sum())} rows differ"


@pytest.mark.parametrize("nq,nk,dens", [(16, 16, 0.3), (5, 37, 0.2), (32, 48, 0.1)])
def test_topk_rows_breaks_ties_like_topk_blocks(nq, nk, dens):
    g = torch.Generator().manual_seed(nq * nk)
    scores = torch.randint(0, 3, (2, 3, nq, nk), generator=g).float()  # mostly ties
    scores[0, 0, :, :2] = float("-inf")  # a selector may score a block -inf
    want = topk_blocks(scores, budget_counts(nq, nk, dens))
    got = topk_rows(scores, dens)
    assert torch.equal(got[0], want[0]) and torch.equal(got[1], want[1])
