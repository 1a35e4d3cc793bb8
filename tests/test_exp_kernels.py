"""The Triton exp2 variants under the interpreter: each element goes where its variant says."""
import os

os.environ.setdefault("TRITON_INTERPRET", "1")

import pytest  # noqa: E402
import torch  # noqa: E402

from runners.correctness import rel_err  # noqa: E402
from suite.techniques.exp_approx import reference as R  # noqa: E402
from suite.techniques.exp_approx.common import launch  # noqa: E402
from suite.lib.exp2 import exp2_poly_torch  # noqa: E402

N = 4096  # one interpreter block of 16 units of 256


def _x(seed=0):
    g = torch.Generator().manual_seed(seed)
    return (-126.0 * torch.rand(N, generator=g, dtype=torch.float64)).float()


@pytest.mark.parametrize("degree,k", [(0, 0), (1, 16), (3, 16), (3, 4), (3, 5), (3, 7), (3, 8)])
def test_split_sends_k_sixteenths_to_the_polynomial(degree, k):
    x = _x()
    out = torch.full_like(x, float("nan"))
    launch(out, x, "sum", 1, 0.0, degree, k)
    poly = exp2_poly_torch(x, max(degree, 1))
    hw = torch.exp2(x)
    is_poly = out == poly
    is_hw = (out.view(torch.int32) - hw.view(torch.int32)).abs() <= 1
    # The two paths differ on almost every element (degrees <= 3), so the counts identify the split.
    assert (poly != hw).float().mean() > 0.9
    assert int((is_poly & ~is_hw).sum()) == pytest.approx(N * k / 16, abs=N * 0.01)
    assert bool((is_poly | is_hw).all())


@pytest.mark.parametrize("kind", ["sum", "chain", "softmax"])
def test_kernels_match_the_oracle_like_their_torch_emulation(kind):
    params = {"sum": {"kind": "sum", "n": N, "terms": 5, "lo": -8.0, "delta": 0.0625},
              "chain": {"kind": "chain", "n": N, "terms": 5, "shift": 1.5},
              "softmax": {"kind": "softmax", "rows": 3, "cols": 512}}[kind]
    inputs = R.make_inputs(params, 1, "cpu")
    ref = R.reference(**inputs)
    for degree, k, lowp in [(0, 0, R.lowp_fp32), (3, 16, R.lowp_poly3), (3, 6, R.lowp_poly3),
                            (1, 16, R.lowp_poly1)]:
        out = R.empty_output(params, "cpu").fill_(float("nan"))
        launch(out, inputs["x"], kind, inputs["terms"], inputs["delta"], degree, k)
        err, low = rel_err(out, ref), rel_err(lowp(**inputs), ref)
        assert err <= 4 * low + 1e-7, (degree, k, err, low)
    if kind == "softmax":
        assert torch.allclose(out.float().sum(-1), torch.ones(3), atol=2e-2)


def test_sum_kernel_is_sum_of_exp2():
    """Not a constant multiple by accident: two terms of exp2(x - j/16) exactly."""
    x = -torch.arange(N, dtype=torch.float32) / 1024
    out = torch.empty_like(x)
    launch(out, x, "sum", 2, 0.0625, 0, 0)
    want = torch.exp2(x.double()) * (1 + 2 ** -0.0625)
    assert rel_err(out, want) < 1e-6
