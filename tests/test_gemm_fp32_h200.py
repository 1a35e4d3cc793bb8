"""The committed H200 run of gemm_fp32_emulation: fast-and-wrong is caught, and the issue's targets
as measured (each against cublas_fp32 measured in the same run)."""
from pathlib import Path

import pytest

from runners.resultfile import load

H200 = Path(__file__).resolve().parent.parent / "results" / "h200"
BIG = "m8192n8192k8192"


@pytest.fixture(scope="module")
def rows():
    doc = load(H200 / "gemm_fp32_emulation_nightly.json.gz")
    assert doc["run"]["env"]["gpu_name"] == "NVIDIA H200"
    return {(r["impl"], r["case"], r["metric"]): r for r in doc["results"]}


@pytest.mark.parametrize("impl", ["cublas_bf16x9_kcat", "triton_bf16x9_chain", "triton_bf16x3_chain"])
def test_long_tensor_core_chains_fail_correctness(rows, impl):
    """One bf16 GEMM over K-concatenated pieces (and our own single-chain kernels) are fast but
    accumulate every product in the tensor core's accumulator: marked failed_correctness."""
    err = rows[(impl, BIG, "rel_err")]
    assert err["status"] == "failed_correctness"
    assert err["value"] > err["stats"]["tolerance"]
    assert rows[(impl, BIG, "tflops")]["value"] is None  # its speed is not counted


def test_kcat_error_is_the_known_one(rows):
    err = rows[("cublas_bf16x9_kcat", BIG, "rel_err")]
    assert 3e-5 < err["value"] < 3e-4  # NOTES.md measured 8.5e-5
    assert err["stats"]["accuracy_class"] == "fp32"


def test_targets_at_8192(rows):
    tf = lambda impl: rows[(impl, BIG, "tflops")]["value"]
    err = lambda impl: rows[(impl, BIG, "rel_err")]["value"]
    base = tf("cublas_fp32")
    assert 40 < base < 60
    assert tf("triton_bf16x9") >= 1.3 * base and err("triton_bf16x9") <= err("cublas_fp32")
    assert tf("triton_bf16x6") >= 1.8 * base and err("triton_bf16x6") <= err("cublas_fp32")
    assert tf("triton_bf16x3") >= 3.5 * base
    assert tf("triton_bf16x6") > tf("triton_dot_bf16x6") and tf("triton_bf16x3") > tf("triton_dot_bf16x3")
    # pre-split planes beat splitting in registers for x9 and x6
    assert tf("triton_bf16x9") > tf("triton_bf16x9_regsplit")
    assert tf("triton_bf16x6") > tf("triton_bf16x6_regsplit")


def _final(name: str) -> dict:
    doc = load(H200 / name)
    assert doc["run"]["env"]["gpu_name"] == "NVIDIA H200"
    assert doc["run"]["git"]["commit"] and not doc["run"]["git"]["dirty"]  # a run that can back a figure
    return {(r["impl"], r["case"], r["metric"]): r["value"] for r in doc["results"] if r["status"] == "ok"}


def test_issue_19_targets_as_measured_at_8192():
    """One run at 8192^3 (docs/numerics_gemm.md, "Near the limit"): x9 and x6 within cuBLAS FP32's
    error; the speedups the issue asked for (1.45 / 2.0 / 3.8x) are not reached."""
    v = _final("gemm_fp32_emulation_tma_8192.json")
    base, err = v[("cublas_fp32", BIG, "tflops")], v[("cublas_fp32", BIG, "rel_err")]
    x = {i: v[(i, BIG, "tflops")] / base for i in ("triton_bf16x9", "triton_bf16x6", "triton_bf16x3",
                                                   "triton_bf16x9_tma", "triton_bf16x6_tma", "triton_bf16x3_tma")}
    for i in x:
        if "x3" not in i:
            assert v[(i, BIG, "rel_err")] <= err
    assert 1.35 <= max(x["triton_bf16x9"], x["triton_bf16x9_tma"]) < 1.45
    assert 1.75 <= max(x["triton_bf16x6"], x["triton_bf16x6_tma"]) < 2.0
    assert 3.4 <= max(x["triton_bf16x3"], x["triton_bf16x3_tma"]) < 3.8


def test_skinny_and_k_short_shapes_beat_cublas_fp32():
    v = _final("gemm_fp32_emulation_tma_shapes.json.gz")
    for case in ("m16384n256k8192", "m256n16384k8192", "m8192n8192k256"):
        base = v[("cublas_fp32", case, "tflops")]
        for scheme, least in (("bf16x9", 1.05), ("bf16x6", 1.25), ("bf16x3", 2.1)):
            assert v[(f"triton_{scheme}", case, "tflops")] >= least * base, (case, scheme)


@pytest.mark.parametrize("name", ["gemm_fp32_emulation_ws_8192.json", "gemm_fp32_emulation_ws_8192_b.json"])
def test_warp_specialised_runs_at_8192(name):
    """Two back-to-back runs at b18a217 with the warp-specialised kernel (docs/numerics_gemm.md, "Warp
    specialisation, refresh, persistence"): every implementation correct (its half-written tiles fixed), x9
    and x6 within cuBLAS FP32's error, warp specialisation fastest for x3 only, the targets still not reached."""
    v = _final(name)
    impls = [f"triton_{s}{k}" for k in ("", "_tma", "_ws") for s in ("bf16x9", "bf16x6", "bf16x3")]
    base, err = v[("cublas_fp32", BIG, "tflops")], v[("cublas_fp32", BIG, "rel_err")]
    x = {i: v[(i, BIG, "tflops")] / base for i in impls}  # KeyError: an implementation that did not pass
    for i in impls:
        if "x3" not in i:
            assert v[(i, BIG, "rel_err")] <= err
    best = {s: max(r for i, r in x.items() if s in i) for s in ("bf16x9", "bf16x6", "bf16x3")}
    assert 1.35 <= best["bf16x9"] < 1.45 and 1.75 <= best["bf16x6"] < 2.0 and 3.4 <= best["bf16x3"] < 3.8
    assert x["triton_bf16x3_ws"] == best["bf16x3"] > x["triton_bf16x3"]
    assert x["triton_bf16x9_ws"] < max(x["triton_bf16x9"], x["triton_bf16x9_tma"])


def test_warp_specialised_shapes():
    """Warp-specialised x3 fastest on both skinny shapes, slowest of the three kernels at K = 256."""
    v = _final("gemm_fp32_emulation_ws_shapes.json.gz")
    tf = lambda impl, case: v[(impl, case, "tflops")]
    for case in ("m16384n256k8192", "m256n16384k8192"):
        assert tf("triton_bf16x3_ws", case) > max(tf("triton_bf16x3", case), tf("triton_bf16x3_tma", case))
    for s in ("bf16x9", "bf16x6", "bf16x3"):
        case = "m8192n8192k256"
        assert tf(f"triton_{s}_ws", case) < min(tf(f"triton_{s}", case), tf(f"triton_{s}_tma", case))
