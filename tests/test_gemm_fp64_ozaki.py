"""Ozaki scheme on int8 slices: exact slicing, exact int32 products, fp64-level accuracy with 8
slices on the CPU, and the committed H200 comparison with native FP64 GEMM."""
import gzip
import json
from pathlib import Path

import numpy as np
import pytest
import torch

from suite.techniques.gemm_fp64_ozaki import common
from suite.techniques.gemm_fp64_ozaki.reference import make_inputs, reference

H200 = Path(__file__).resolve().parent.parent / "results" / "h200" / "gemm_fp64_ozaki_nightly.json.gz"


def test_slices_reconstruct_within_their_precision():
    x = make_inputs({"m": 40, "n": 8, "k": 64, "spread": 20}, 0, "cpu")["a"]
    d, e = common.slices(x, 8, dim=1)
    assert d.dtype == torch.int8 and d.abs().max() <= 127
    back = sum(torch.ldexp(d[p].double(), torch.tensor(-7.0 * (p + 1))) for p in range(8))
    back = torch.ldexp(back, e.double())
    scale = torch.ldexp(torch.ones_like(e, dtype=torch.float64), e.double())
    assert ((back - x).abs() <= scale * 2.0 ** -56).all()  # rest below 2**(-7s) of the row scale


def test_pairs_are_triangular():
    pairs = common.pairs_for(4)
    assert sum(len(v) for v in pairs.values()) == 10
    assert all(p + q == d and p <= 4 and q <= 4 for d, v in pairs.items() for p, q in v)


def test_int_matmul_exact_splits_long_k(monkeypatch):
    monkeypatch.setattr(common, "MAX_EXACT_K", 16)  # force several chunks
    g = torch.Generator().manual_seed(0)
    a = torch.randint(-127, 128, (20, 48), generator=g, dtype=torch.int8)
    bt = torch.randint(-127, 128, (24, 48), generator=g, dtype=torch.int8)
    calls = []
    mm = lambda x, y: (calls.append(x.shape[1]), torch._int_mm(x, y))[1]
    out = common.int_matmul_exact(a, bt, mm)
    assert calls == [16, 16, 16]
    assert torch.equal(out, (a.double() @ bt.double().t()))


@pytest.mark.parametrize("s,bound", [(6, 1e-10), (7, 1e-12), (8, 2e-15)])
def test_accuracy_against_long_double(s, bound):
    p = {"m": 48, "n": 40, "k": 256}
    x = make_inputs(p, 3, "cpu")
    ref = reference(**x)
    assert np.finfo(np.longdouble).nmant >= 63  # x87 extended oracle on this CPU
    out = common.ozaki_matmul(x["a"], x["b"], s, common.int_mm)
    err = ((out - ref).norm() / ref.norm()).item()
    native = ((x["a"] @ x["b"] - ref).norm() / ref.norm()).item()
    assert err < bound
    if s == 8:
        assert err <= 4 * native + 1e-16  # as accurate as native DGEMM


def test_h200_ozaki_against_native_fp64():
    doc = json.loads(gzip.decompress(H200.read_bytes()))
    assert doc["run"]["env"]["gpu_name"] == "NVIDIA H200"
    v = {(r["impl"], r["case"], r["metric"]): r["value"] for r in doc["results"] if r["status"] == "ok"}
    big = "m8192n8192k8192"
    assert v[("cublas_int8_ozaki_s8", big, "rel_err")] < 1e-14
    # on the H200 the FP64 tensor cores win: the int8 emulation is slower at every slice count
    for s in (6, 7, 8):
        assert v[(f"cublas_int8_ozaki_s{s}", big, "tflops")] < v[("cublas_fp64", big, "tflops")]
