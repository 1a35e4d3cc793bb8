"""Exponent sweep of FP32 emulation: the CPU reference emulation at a small grid (what CI can run),
the region function, and the committed H200 sweep."""
from pathlib import Path

import torch

from runners.resultfile import load

from suite.spec import Case
from suite.lib.planes import emulate
from suite.techniques.gemm_fp32_emulation.reference import lowp_fp32
from suite.techniques.gemm_fp32_emulation import sweep

H200 = Path(__file__).resolve().parent.parent / "results" / "h200" / "gemm_fp32_emulation_sweep_nightly.json.gz"


def _fn(scheme):
    return lambda out, a, b: out.copy_(emulate(a, b, scheme) if scheme else lowp_fp32(a, b))


def test_point_errors_locate_the_lower_edge_of_bf16x6():
    p = {"m": 32, "n": 32, "k": 32, "dist": "unit_exp", "exp_b": 0}
    ok = lambda scheme, ea: sweep.point_errors(_fn(scheme), dict(p, exp_a=ea), 0, "cpu")["within_fp32"]
    assert ok("bf16x6", 0) == 1.0 and ok("bf16x6", -110) == 1.0
    assert ok("bf16x6", -120) == 0.0  # the lo piece falls below bf16's subnormal range
    assert ok(None, -120) == 1.0  # fp32 itself is fine there
    assert ok("bf16x3", 0) == 0.0  # two pieces never reach fp32 accuracy


def test_probe_rows_for_a_small_grid(monkeypatch):
    monkeypatch.setitem(sweep.GRIDS, "smoke", (-120, 0, 127))
    monkeypatch.setitem(sweep.SPREADS, "smoke", (0,))
    case = Case("sweep_smoke", {"m": 32, "n": 32, "k": 32, "dist": "unit_exp", "sweep": "smoke"})
    rows = sweep.probe(fn=_fn("bf16x9"), case=case, device="cpu", seed=0)
    ids = {r["case"] for r in rows}
    assert {"sweep_ea-120_eb+0", "sweep_ea+127_eb-120", "spread_s0", "denorm_piece"} <= ids
    bad = [r for r in rows if r["case"] == "sweep_ea+127_eb-120" and r["metric"] == "rel_err"]
    assert bad[0]["status"] == "failed_correctness"  # the split overflows to inf at 2**127
    assert all(r["value"] is not None for r in rows if r.get("status", "ok") == "ok")
    full = [dict(r, impl="x") for r in rows]
    assert sweep.region(full, "x")["exp_a_with_b0"] == (0, 127)


def test_h200_sweep_region_and_no_flush_to_zero():
    doc = load(H200)
    rows = doc["results"]
    for impl in ("triton_bf16x9", "triton_bf16x6", "triton_dot_bf16x6"):
        reg = sweep.region(rows, impl)
        assert reg["exp_a_with_b0"] == (-112, 127) and reg["square_box"] == (-112, 126)
    assert sweep.region(rows, "cublas_fp32")["valid_points"] == 169
    # bf16-subnormal pieces survive the tensor cores: flushing would cost 2**-12 here
    piece = [r for r in rows if r["impl"] == "triton_bf16x6" and r["case"] == "denorm_piece"
             and r["metric"] == "rel_err"][0]
    assert piece["value"] < 1e-6 and piece["stats"]["zero_outputs"] == 0


def test_probe_cliff_rows_separate_x6_from_x9(monkeypatch):
    """The sweep carries the BF16x6 cliff class (cliff.py): at K = 256, x6 is outside 4x fp32's
    error there while x9 is within, and both are within at an ordinary grid point."""
    monkeypatch.setitem(sweep.GRIDS, "smoke", (0,))
    monkeypatch.setitem(sweep.SPREADS, "smoke", ())
    case = Case("sweep_smoke", {"m": 32, "n": 32, "k": 32, "dist": "unit_exp", "sweep": "smoke"})

    def within(scheme):
        rows = sweep.probe(fn=_fn(scheme), case=case, device="cpu", seed=0)
        return {r["case"]: r["value"] for r in rows if r["metric"] == "within_fp32"}

    x6, x9 = within("bf16x6"), within("bf16x9")
    assert x9["cliff_k256"] == 1.0 and x6["cliff_k256"] == 0.0
    assert x6["sweep_ea+0_eb+0"] == 1.0 == x9["sweep_ea+0_eb+0"]


def test_h200_sweep_has_the_cliff_where_x6_fails_and_x9_holds():
    """results/h200/gemm_fp32_emulation_sweep_cliff.json.gz: on the H200 our BF16x6 and Triton's
    built-in bf16x6 break the 4x-cuBLAS rule on the cliff class at every K, BF16x9 never does."""
    doc = load(H200.parent / "gemm_fp32_emulation_sweep_cliff.json.gz")
    assert doc["run"]["git"]["commit"] and doc["run"]["env"]["gpu_name"] == "NVIDIA H200"
    within = {(r["impl"], r["case"]): r["value"] for r in doc["results"] if r["metric"] == "within_fp32"}
    for k in (256, 1024, 4096):
        case = f"cliff_k{k}"
        assert within[("triton_bf16x6", case)] == 0.0 == within[("triton_dot_bf16x6", case)]
        assert within[("triton_bf16x9", case)] == 1.0 == within[("cublas_fp32", case)]
    assert sweep.region(doc["results"], "triton_bf16x6")["exp_a_with_b0"] == (-112, 127)
