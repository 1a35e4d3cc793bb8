"""The committed exp2 coefficients are what the Remez fit gives, and their errors are as claimed."""
import numpy as np
import pytest
import torch

from suite.techniques.exp_approx import fit
from suite.lib.exp2 import COEFFS, FIT_MAX_REL_ERR, exp2_poly_torch, poly_mask, UNITS


@pytest.mark.parametrize("degree", [1, 2, 3, 4, 5])
def test_committed_coefficients_are_the_fit(degree):
    coeffs, err = fit.fp32_coeffs(degree)
    assert coeffs == COEFFS[degree]
    assert err == pytest.approx(FIT_MAX_REL_ERR[degree], rel=1e-3)


def test_remez_equioscillates():
    """A minimax fit of degree d touches its maximum error d+1 times with alternating signs."""
    c, level = fit.remez(3)
    e = fit._rel_err(c, fit.GRID)
    ext = fit._alternating_extrema(e, 4)
    assert len(ext) == 4
    assert np.allclose(np.abs(e[ext]), level, rtol=1e-3)
    assert np.all(np.sign(e[ext][1:]) != np.sign(e[ext][:-1]))


def test_degree3_meets_the_fa4_bound_in_fp32():
    """fp32 evaluation over a dense grid of the softmax range: <= 1e-4 (the paper reports 8.8e-5)."""
    x = torch.linspace(-126.0, 0.0, 2_000_001, dtype=torch.float64).float()
    ref = torch.exp2(x.double())
    err = ((exp2_poly_torch(x, 3).double() - ref) / ref).abs().max().item()
    assert err <= 1e-4
    errs = [((exp2_poly_torch(x, d).double() - ref) / ref).abs().max().item() for d in range(1, 6)]
    assert all(a > 4 * b for a, b in zip(errs, errs[1:]))  # each degree buys accuracy


def test_exponent_add_edges():
    """p(0) = 1 makes the clamp value -127 (and -inf) exactly 0; integers are exact."""
    x = torch.tensor([-float("inf"), -1000.0, -127.0, -126.0, -3.0, 0.0])
    y = exp2_poly_torch(x, 3)
    assert y[:3].tolist() == [0.0, 0.0, 0.0]
    assert y[3:].tolist() == [2.0 ** -126, 0.125, 1.0]


@pytest.mark.parametrize("k", range(17))
def test_poly_mask_covers_k_sixteenths(k):
    m = poly_mask(k)
    assert sum(u for i, u in enumerate(UNITS) if m >> i & 1) == k
