"""The BF16x6 cliff: the dropped products' bound, the input class where BF16x6 fails the 4x-FP32
rule while BF16x9 holds (exact CPU model, torch reference, the real Triton kernel interpreted), and
the committed search."""
import json
import os

os.environ.setdefault("TRITON_INTERPRET", "1")  # before triton is imported by the kernel modules

import pytest
import torch

from runners.studies.bf16x6_cliff import K_TOL, errors, fma_chain, kernel_model, rel
from suite.lib.planes import emulate, split
from suite.techniques.gemm_fp32_emulation.cliff import CLIFF, cliff_inputs
from suite.techniques.gemm_fp32_emulation.reference import lowp_fp32
from tests.conftest import ROOT

SEARCH = ROOT / "docs" / "data" / "cpu_bf16x6_cliff.json"


def _cliff(k: int, seed: int = 0, **kw):
    ins = cliff_inputs(dict(CLIFF, m=16, n=16, k=k, **kw), seed, "cpu")
    return ins["a"], ins["b"]


def test_dropped_products_are_below_one_unit_roundoff_of_each_product():
    """mid*lo + lo*mid + lo*lo <= (2^-24 + 2^-34) |a||b| for every normal pair, the maximal-residual
    pieces of the cliff class included; it reaches about half of that there."""
    g = torch.Generator().manual_seed(0)
    a = torch.randn(20000, generator=g) * torch.exp2(torch.randint(-60, 60, (20000,), generator=g).float())
    b = torch.randn(20000, generator=g) * torch.exp2(torch.randint(-40, 40, (20000,), generator=g).float())
    ca, cb = _cliff(2000)
    for x, y in ((a, b), (ca[0], cb[:, 0])):
        (_, ma, la), (_, mb, lb) = split(x, 3), split(y, 3)
        dropped = (ma.double() * lb + la.double() * mb + la.double() * lb).abs()
        bound = (2.0 ** -24 + 2.0 ** -34) * (x.double() * y.double()).abs()
        assert (dropped <= bound).all()
    ratio = dropped / ((ca[0].double() * cb[:, 0].double()).abs() * 2.0 ** -24)
    assert ratio.median() > 0.25  # the cliff class sits near the bound, random data far below it


@pytest.mark.parametrize("k,least", [(256, 8.0), (1024, 16.0)])
def test_cliff_class_fails_x6_and_keeps_x9(k, least):
    """One-signed mid/lo pieces, leading pieces cancelling in pairs: the dropped products add up
    linearly in K. BF16x6 is over 4x FP32's error (CPU GEMM and the FMA-chain model alike, by a
    margin), BF16x9 stays below FP32's own error; the project's torch reference agrees."""
    a, b = _cliff(k)
    e = errors(a, b)
    assert e["x6_fails"] and e["x6_over_fp32"] > least
    assert e["x9_holds"] and e["x9"] < min(e["fp32_cpu"], e["fp32_fma"])
    ref = a.double() @ b.double()
    fp32 = rel(lowp_fp32(a, b), ref)
    assert rel(emulate(a, b, "bf16x6"), ref) > K_TOL * fp32 >= K_TOL * rel(emulate(a, b, "bf16x9"), ref)


def test_random_operands_cannot_separate_the_schemes():
    """The same shapes with random piece signs and no cancellation: x6 within 25% of x9 even with
    maximal mid and lo pieces, and both below fp32's error."""
    a, b = _cliff(1024, cancel=0.0, bias=0.0)
    e = errors(a, b)
    assert not e["x6_fails"] and e["x6"] == pytest.approx(e["x9"], rel=0.25)
    assert e["x6_over_fp32"] < 1


def test_fma_chain_model_is_an_fp32_gemm():
    a, b = _cliff(64, cancel=0.0, bias=0.0)
    ref = a.double() @ b.double()
    assert rel(fma_chain(a, b), ref) < 1e-6 and kernel_model(a, b, "bf16x9").dtype == torch.float32


def test_real_planes_kernel_interpreted_shows_the_cliff():
    """The shipped planes kernel (split kernel + GEMM, TRITON_INTERPRET=1): x6 breaks the rule on
    the cliff class, x9 holds, and both match the exact model of the kernel within 10%."""
    from suite.techniques.gemm_fp32_emulation.triton_planes_kernel import run as planes_gemm

    a, b = _cliff(1024)
    ref = a.double() @ b.double()
    fp32 = rel(lowp_fp32(a, b), ref)
    got = {}
    for scheme in ("bf16x6", "bf16x9"):
        out = torch.full((16, 16), float("nan"))
        planes_gemm(out, a, b, scheme)
        got[scheme] = rel(out, ref)
    assert got["bf16x6"] > K_TOL * fp32 and got["bf16x9"] <= K_TOL * fp32
    assert got["bf16x6"] == pytest.approx(rel(kernel_model(a, b, "bf16x6", bk=64), ref), rel=0.1)


def test_committed_search_names_the_class():
    """docs/data/cpu_bf16x6_cliff.json: every point where x6 fails and x9 holds cancels its leading
    pieces (cancel = 1) with mostly one-signed low pieces (bias >= 0.5) over K >= 128; no point
    fails x9 in the structured searches."""
    doc = json.loads(SEARCH.read_text())
    pts = doc["grid"] + doc["random"]
    sep = [p for p in pts if p["x6_fails"] and p["x9_holds"]]
    assert sep and doc["counts"]["separating"] == len(sep) and doc["counts"]["x9_fails"] == 0
    for p in sep:
        assert p["params"]["cancel"] == 1.0 and p["params"]["bias"] >= 0.5 and p["params"]["k"] >= 128
    w = doc["worst"]["x6"]
    assert w["x6_fails"] and w["x9_holds"] and w["x6_over_fp32"] > 40
    # Inside the page's exponent range the class fails the same way (a scaled by 2^exp).
    by_exp = {p["params"]["exp"]: p for p in doc["grid"] if p["params"]["k"] == 1024
              and p["params"]["cancel"] == 1.0 and p["params"]["bias"] == 1.0 and p["params"]["mfrac"] == 1.0
              and p["params"]["lfrac"] == 1.0 and p["params"]["spread"] == 0}
    assert {-100, -64, 0, 64, 100} <= set(by_exp) and all(p["x6_fails"] for p in by_exp.values())
