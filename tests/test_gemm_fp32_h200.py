"""The committed H200 run of gemm_fp32_emulation: fast-and-wrong is caught, and the issue's targets
as measured (each against cublas_fp32 measured in the same run)."""
import json
from pathlib import Path

import pytest

H200 = Path(__file__).resolve().parent.parent / "results" / "h200"
BIG = "m8192n8192k8192"


@pytest.fixture(scope="module")
def rows():
    doc = json.loads((H200 / "gemm_fp32_emulation_nightly.json").read_text())
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
