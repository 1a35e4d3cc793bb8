"""Attention forward with conditional rescaling (interpreter): exact against the fp64 oracle while
it skips most rescales, on scores built so that the running max keeps growing."""
import os

os.environ.setdefault("TRITON_INTERPRET", "1")

import pytest  # noqa: E402
import torch  # noqa: E402

from runners.correctness import rel_err  # noqa: E402
from suite.techniques.softmax_online import reference as R  # noqa: E402
from suite.techniques.softmax_online.common import launch  # noqa: E402

S, D = 256, 64  # 8 query blocks x 8 KV blocks of 32 under the interpreter


def _growing_scores(seed: int, jump: float):
    """Row-independent scores rising ~2 (log2 units) per KV block, plus a jump of `jump`
    at key 160, on top of small noise."""
    g = torch.Generator().manual_seed(seed)
    q = 0.1 * torch.randn(1, 1, S, D, generator=g)
    k = 0.1 * torch.randn(1, 1, S, D, generator=g)
    v = torch.randn(1, 1, S, D, generator=g)
    q[..., 0] = 8.0
    t = torch.arange(S) * (2.0 / 32 / 1.4427) + (torch.arange(S) >= 160) * jump / 1.4427
    k[..., 0] = t
    bf = lambda a: a.to(torch.bfloat16)
    return bf(q), bf(k), bf(v)


def _run(q, k, v, causal, exp, degree, thresh):
    out = torch.full_like(q, float("nan"))
    counts = torch.zeros(3, dtype=torch.int32)
    launch(out, q, k, v, causal, exp, degree, thresh, counts=counts)
    return out, counts.tolist()


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("exp,degree", [(0, 0), (2, 3)])
def test_conditional_rescale_is_exact_and_skips(causal, exp, degree):
    q, k, v = _growing_scores(0, jump=12.0)
    ref = R.reference(q, k, v, causal)
    always, _ = _run(q, k, v, causal, exp, degree, 0.0)
    cond, (blocks, grew, rescales) = _run(q, k, v, causal, exp, degree, 8.0)
    programs = S // 32
    assert grew == blocks  # the max grows in every block...
    assert programs < rescales < blocks // 2  # ...yet most rescales are skipped, not all
    lowp = rel_err(R.lowp_bf16(q, k, v, causal), ref)
    assert rel_err(always, ref) <= 4 * lowp
    # Stale maxima leave p up to 2**8 before the final division: same accuracy as always.
    assert rel_err(cond, ref) <= 1.5 * rel_err(always, ref) + 1e-4


def test_threshold_is_respected():
    """With a threshold above every growth, only the first block of each program rescales; a
    jump above it forces exactly one more rescale per program that sees it."""
    q, k, v = _growing_scores(1, jump=0.0)
    _, (blocks, _, rescales) = _run(q, k, v, False, 0, 0, 100.0)
    assert rescales == S // 32
    q, k, v = _growing_scores(1, jump=150.0)
    out, (blocks, _, rescales) = _run(q, k, v, False, 0, 0, 100.0)
    assert rescales == 2 * (S // 32)
    assert rel_err(out, R.reference(q, k, v, False)) < 1e-2
