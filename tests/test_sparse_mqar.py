"""MQAR data follows the Zoology task; the model's selector path equals dense when all is kept."""
import torch

from suite.techniques.mqar.data import IGNORE, N_KEYS, batch
from suite.techniques.mqar.model import TinyLM
from suite.techniques.mqar.data import VOCAB
from suite.techniques.sparse_selectors.common import select


def test_every_query_asks_for_the_value_bound_to_its_key():
    x, y, q = batch(16, 128, 8, torch.Generator().manual_seed(0))
    assert q.sum(1).eq(8).all()
    for i in range(16):
        pairs = {int(x[i, 2 * j]): int(x[i, 2 * j + 1]) for j in range(8)}
        for p in torch.nonzero(q[i]).flatten().tolist():
            assert p >= 16 and int(x[i, p]) in pairs and int(y[i, p]) == pairs[int(x[i, p])]
    assert (x[:, 0:16:2] <= N_KEYS).all() and (y[:, :16] == IGNORE).all()


def test_selector_path_with_everything_kept_equals_dense():
    torch.manual_seed(0)
    model = TinyLM(VOCAB, dim=32).eval()
    x, _, _ = batch(2, 64, 4, torch.Generator().manual_seed(1))
    dense = model(x)
    for name in ("exact_topk", "mean_pool", "zeta_morton"):
        sparse = model(x, (lambda qq, kk, b, d, n=name: select(n, qq, kk, b, d), 8, 1.0))
        assert torch.allclose(dense, sparse, atol=1e-4)
    # A small budget changes the computation (the probe is not vacuous).
    thin = model(x, (lambda qq, kk, b, d: select("mean_pool", qq, kk, b, d), 8, 0.1))
    assert not torch.allclose(dense, thin, atol=1e-3)
