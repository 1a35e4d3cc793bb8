"""Monarch and butterfly: one matrix in three forms agrees in fp64; the Monarch projection is exact on
Monarch matrices, optimal against perturbations, and its error formula matches the residual."""
import pytest
import torch

from suite.techniques.monarch import probe as monarch_probe
from suite.techniques.monarch.factors import (butterfly_apply, monarch_apply, monarch_dense, monarch_of_butterfly,
                                              random_butterfly)
from suite.techniques.monarch.projection import KINDS, project, projection_error, dense_matrix
from suite.techniques.monarch.reference import make_inputs
from suite.techniques.monarch.structured import parameters

F64 = torch.float64


@pytest.mark.parametrize("n,nb", [(64, 8), (256, 4), (256, 64), (128, 128), (128, 1)])
def test_butterfly_monarch_and_dense_are_one_matrix(n, nb):
    g = torch.Generator().manual_seed(n + nb)
    tw = random_butterfly(n, g, "cpu")
    blk_r, blk_l = monarch_of_butterfly(tw, nb)
    x = torch.randn(5, n, generator=g, dtype=F64)
    w = monarch_dense(blk_l, blk_r)
    torch.testing.assert_close(monarch_apply(x, blk_l, blk_r), butterfly_apply(x, tw), rtol=0, atol=1e-12)
    torch.testing.assert_close(x @ w.t(), butterfly_apply(x, tw), rtol=0, atol=1e-12)
    torch.testing.assert_close(w @ w.t(), torch.eye(n, dtype=F64), rtol=0, atol=1e-12)  # rotations


def test_the_stored_forms_have_the_counted_parameters():
    inp = make_inputs({"batch": 2, "n": 256, "nb": 4}, 0, "cpu")
    assert inp["w"].numel() == parameters("dense", 256, 4)
    assert inp["blk_r"].numel() + inp["blk_l"].numel() == parameters("monarch", 256, 4)
    assert inp["tw"].numel() == parameters("butterfly", 256, 4)


@pytest.mark.parametrize("seed", range(3))
def test_projection_is_exact_on_monarch_matrices_and_optimal_elsewhere(seed):
    g = torch.Generator().manual_seed(seed)
    n, nb = 64, 8
    m = monarch_dense(torch.randn(8, 8, 8, generator=g, dtype=F64), torch.randn(8, 8, 8, generator=g, dtype=F64))
    assert projection_error(m, nb) < 1e-12
    blk_l, blk_r = project(m, nb)
    torch.testing.assert_close(monarch_dense(blk_l, blk_r), m, rtol=0, atol=1e-10)
    a = torch.randn(n, n, generator=g, dtype=F64)
    blk_l, blk_r = project(a, nb)
    best = (a - monarch_dense(blk_l, blk_r)).norm() / a.norm()
    assert abs(best.item() - projection_error(a, nb)) < 1e-12
    for _ in range(20):  # no nearby Monarch is nearer
        dl, dr = (1e-2 * torch.randn(t.shape, generator=g, dtype=F64) for t in (blk_l, blk_r))
        assert (a - monarch_dense(blk_l + dl, blk_r + dr)).norm() / a.norm() >= best - 1e-12


def test_projection_errors_by_kind():
    g = torch.Generator().manual_seed(0)
    err = {k: projection_error(dense_matrix(k, 256, g), 16) for k in KINDS}
    assert err["hadamard"] < 1e-12  # H_256 = H_16 (x) H_16: a Monarch
    assert err["gaussian"] > 0.8  # one rank-1 term of each 16 x 16 slice keeps little of it
    assert 0.05 < err["monarch_noise"] < 0.1  # the 10% noise, less what the projection absorbs
    assert err["rbf"] < err["lowrank16"] < err["gaussian"]


def test_probe_reports_projection_only_on_marked_monarch_cases():
    from functools import partial

    from suite.spec import Case
    from suite.techniques.monarch.structured import run

    marked = Case("x", {"batch": 2, "n": 64, "nb": 8, "project": True})
    rows = monarch_probe.probe(partial(run, form="monarch"), marked, "cpu", 1)
    assert [r["metric"] for r in rows] == ["params_count"] + ["proj_rel_err"] * len(KINDS)
    rows = monarch_probe.probe(partial(run, form="dense"), marked, "cpu", 1)
    assert [(r["metric"], r["value"]) for r in rows] == [("params_count", 4096.0)]
