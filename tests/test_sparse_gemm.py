"""Sparse GEMM: the three sparsity patterns, the tile lists, the tile-skipping Triton kernel under the
interpreter (it must never read a zero tile), and the CSR path's arithmetic on the CPU (fp32: torch's
CPU has no bf16 CSR matmul)."""
import os

os.environ.setdefault("TRITON_INTERPRET", "1")

import pytest  # noqa: E402
import torch  # noqa: E402

from runners.correctness import rel_err  # noqa: E402
from suite.techniques.sparse_gemm import cusparse_csr, semi_structured, triton_tile_skip  # noqa: E402
from suite.techniques.sparse_gemm.reference import lowp_dense, make_inputs, reference  # noqa: E402
from suite.techniques.sparse_gemm.tiles import TILE, tile_lists  # noqa: E402


def _inputs(pattern, density, m=8, n=128, k=256, seed=0):
    return make_inputs({"m": m, "n": n, "k": k, "pattern": pattern, "density": density}, seed, "cpu")


@pytest.mark.parametrize("seed", range(5))
def test_patterns_have_their_shape(seed):
    w = _inputs("unstructured", 0.1, n=256, k=512, seed=seed)["w"]
    assert 0.08 < (w != 0).float().mean() < 0.12
    w = _inputs("block", 0.3, n=256, k=512, seed=seed)["w"]
    tiles = (w != 0).view(4, TILE, 8, TILE).permute(0, 2, 1, 3).reshape(32, -1)
    assert tiles.any(1).sum() == round(0.3 * 32)
    assert torch.equal(tiles.any(1), tiles.all(1))  # a tile is all zero or all nonzero
    w = _inputs("2:4", 0.5, seed=seed)["w"]
    assert (w != 0).view(128, 64, 4).sum(-1).eq(2).all()


def test_tile_lists_name_exactly_the_nonzero_tiles():
    w = _inputs("block", 0.5, n=192, k=256, seed=3)["w"]
    ptr, ks = tile_lists(w)
    for row in range(3):
        listed = ks[ptr[row]:ptr[row + 1]].tolist()
        want = [c for c in range(4) if w[row * TILE:(row + 1) * TILE, c * TILE:(c + 1) * TILE].ne(0).any()]
        assert listed == want


@pytest.mark.parametrize("m,density", [(8, 0.5), (40, 0.3), (5, 0.0)])
def test_tile_skip_never_reads_a_zero_tile(m, density):
    inp = _inputs("block", density, m=m, n=192, k=256, seed=m)
    want, oracle = lowp_dense(**inp), reference(**inp)
    tiles = inp["w"].ne(0).view(3, TILE, 4, TILE).any(3).any(1)
    poisoned = inp["w"].clone().view(3, TILE, 4, TILE)
    poisoned.permute(0, 2, 1, 3)[~tiles] = float("nan")  # the kernel must skip these
    out = torch.full((m, 192), float("nan"), dtype=torch.bfloat16)
    triton_tile_skip.run(out, inp["x"], poisoned.view(192, 256), inp["tile_ptr"], inp["tile_k"])
    assert torch.isfinite(out).all()
    if density == 0:
        assert out.eq(0).all()
    else:
        assert rel_err(out, oracle) <= 1.5 * rel_err(want, oracle)


def test_csr_path_computes_x_times_w_transposed():
    inp = _inputs("unstructured", 0.2, m=6, seed=1)
    x, w = inp["x"].float(), inp["w"].float()
    csr = w.to_sparse_csr()
    out = torch.full((6, 128), float("nan"))
    cusparse_csr.run(out, x, torch.sparse_csr_tensor(csr.crow_indices().int(), csr.col_indices().int(),
                                                     csr.values(), size=w.shape))
    torch.testing.assert_close(out, x @ w.t(), rtol=1e-5, atol=1e-5)


def test_semi_structured_without_its_backend_says_so():
    inp = _inputs("2:4", 0.5)  # on the CPU no compressed weight is built
    with pytest.raises(RuntimeError, match="cusparselt"):
        semi_structured.run(torch.empty(8, 128, dtype=torch.bfloat16), backend="cusparselt", **inp)
