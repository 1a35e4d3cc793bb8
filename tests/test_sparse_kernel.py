"""Our Triton block-sparse kernel (interpreter on the CPU) against the masked fp64 oracle."""
import os

os.environ.setdefault("TRITON_INTERPRET", "1")

import pytest  # noqa: E402
import torch  # noqa: E402

from suite.lib.block_sparse import (  # noqa: E402
    check_blocks, dense_block_mask, masked_attention, random_blocks, topk_blocks, budget_counts)
from suite.lib.block_sparse_kernel import block_sparse_attention  # noqa: E402


def _qkv(b, hq, hkv, sq, sk, d, seed):
    g = torch.Generator().manual_seed(seed)
    mk = lambda h, s: torch.randn(b, h, s, d, generator=g).to(torch.bfloat16)
    return mk(hq, sq), mk(hkv, sk), mk(hkv, sk), g


def _err(out, ref):
    return ((out.double() - ref).norm() / ref.norm()).item()


@pytest.mark.parametrize("block,hq,hkv,d", [(64, 4, 2, 64), (128, 2, 1, 128)])
def test_kernel_matches_oracle_with_variable_block_counts(block, hq, hkv, d):
    q, k, v, g = _qkv(1, hq, hkv, 4 * block, 4 * block, d, 0)
    num, idx = random_blocks(1, hkv, 4, 4, 0.5, g)
    check_blocks(num, idx)
    assert len(set(num.flatten().tolist())) > 1  # counts really vary per query block
    out = block_sparse_attention(q, k, v, num, idx, block)
    ref = masked_attention(q, k, v, num, idx, block, "fp64")
    lowp = _err(masked_attention(q, k, v, num, idx, block, "bf16"), ref)
    assert _err(out, ref) <= 4 * lowp


def test_kernel_never_reads_unselected_blocks():
    """One query block over 8 KV blocks, NaN in every block it did not select: any read of one
    would poison the output (NaN * 0 is NaN)."""
    block, nb = 64, 8
    q, k, v, g = _qkv(1, 4, 2, block, nb * block, 64, 1)
    num, idx = random_blocks(1, 2, 1, nb, 0.3, g)
    sel = dense_block_mask(num, idx)[0, :, 0]  # (Hkv, nKB)
    assert not bool(sel.all())
    kp, vp = k.clone(), v.clone()
    for h in range(2):
        for j in range(nb):
            if not sel[h, j]:
                kp[0, h, j * block:(j + 1) * block] = float("nan")
                vp[0, h, j * block:(j + 1) * block] = float("nan")
    out = block_sparse_attention(q, kp, vp, num, idx, block)
    assert torch.isfinite(out.float()).all()
    ref = masked_attention(q, k, v, num, idx, block, "fp64")
    assert _err(out, ref) < 1e-2
    # And it does read the blocks it selected: changing one moves the output.
    j = int(torch.nonzero(sel[0])[0])
    v2 = v.clone()
    v2[0, 0, j * block:(j + 1) * block] += 10
    assert _err(block_sparse_attention(q, k, v2, num, idx, block), ref) > 1e-2


def test_kernel_with_queries_at_the_end_of_a_longer_context():
    block = 64
    q, k, v, g = _qkv(1, 2, 1, block, 8 * block, 64, 2)
    num, idx = random_blocks(1, 1, 1, 8, 0.4, g)
    check_blocks(num, idx)
    out = block_sparse_attention(q, k, v, num, idx, block)
    ref = masked_attention(q, k, v, num, idx, block, "fp64")
    assert _err(out, ref) <= 4 * _err(masked_attention(q, k, v, num, idx, block, "bf16"), ref)


def test_check_blocks_rejects_invalid_selections():
    scores = torch.rand(1, 1, 4, 4)
    num, idx = topk_blocks(scores, budget_counts(4, 4, 0.5))
    check_blocks(num, idx)
    bad = idx.clone()
    bad[0, 0, 1, 0] = 3  # a future block for query block 1
    with pytest.raises(ValueError):
        check_blocks(num, bad)
    no_diag = num.clone()
    no_diag[0, 0, 3] = max(1, int(num[0, 0, 3]) - 1)
    if int(no_diag[0, 0, 3]) != int(num[0, 0, 3]):
        with pytest.raises(ValueError):
            check_blocks(no_diag, idx)


def test_flex_block_mask_holds_the_same_selection():
    from torch.nn.attention.flex_attention import flex_attention

    from suite.lib.block_sparse import flex_block_mask

    block = 128
    q, k, v, g = _qkv(1, 4, 2, 4 * block, 4 * block, 32, 3)
    num, idx = random_blocks(1, 2, 4, 4, 0.4, g)
    bm = flex_block_mask(num, idx, block, 4, 4 * block, 4 * block)
    assert torch.equal(bm.to_dense()[:, ::2].bool(), dense_block_mask(num, idx))
    out = flex_attention(q.float(), k.float(), v.float(), block_mask=bm, enable_gqa=True)
    assert _err(out, masked_attention(q, k, v, num, idx, block, "fp64")) < 1e-5
