"""Every committed result file is valid and ingests; the H200 foundation run holds real GPU figures."""
from pathlib import Path

import pytest

from db.validate import load_and_validate, validate
from runners.resultfile import load
from suite.sample_precision import compact_row

RESULTS = Path(__file__).resolve().parent.parent / "results"
# Every JSON file under results/, found by name alone: reading 260 gzipped files at collection would tax
# every pytest run; each test reads its own file once.
FILES = sorted([*RESULTS.rglob("*.json"), *RESULTS.rglob("*.json.gz")])
# The checkout travels to the GPU host whole, under 64 MiB: a large result file is committed gzipped
# (a plain nightly file compresses 6-8x).
PLAIN_MAX_BYTES = 400_000


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(RESULTS)) for p in FILES])
def test_committed_file_is_valid(path):
    doc = load(path)
    if not (isinstance(doc, dict) and doc.get("schema") == 1):
        pytest.skip("not a result file (other JSON, e.g. a raw benchmark dump)")
    validate(doc, str(path))
    assert doc["results"], "a committed result file holds results"


def test_gzipped_files_are_validated_too():
    assert any(p.name.endswith(".json.gz") for p in FILES) and any(p.suffix == ".json" for p in FILES)


def test_large_result_files_are_committed_gzipped():
    big = [str(p.relative_to(RESULTS)) for p in FILES if p.suffix == ".json" and p.stat().st_size > PLAIN_MAX_BYTES]
    assert not big, f"gzip these (kwatch reads .json.gz as it reads .json): {big}"


# The largest files hold most of the tree: each keeps its timed samples at timer precision (a file written
# by ResultFile does; one rewritten by hand or by an older writer is caught here).
LARGEST = sorted(FILES, key=lambda p: p.stat().st_size)[-8:]


@pytest.mark.parametrize("path", LARGEST, ids=[str(p.relative_to(RESULTS)) for p in LARGEST])
def test_largest_files_keep_samples_at_timer_precision(path):
    doc = load(path)
    loose = [i for i, r in enumerate(doc["results"]) if compact_row(r) != r]
    assert not loose, f"{len(loose)} rows with long samples: python3 -m runners.compact_results {path}"


def test_h200_gemm_nightly_figures():
    doc = load_and_validate(RESULTS / "h200" / "gemm_fp32_emulation_nightly_foundation.json.gz")
    assert doc["run"]["env"]["gpu_name"] == "NVIDIA H200"
    tf = {(r["impl"], r["case"]): r["value"] for r in doc["results"] if r["metric"] == "tflops"}
    # cuBLAS fp32 at 8192^3 near the 51 TFLOP/s measured before on this GPU (NOTES.md).
    assert 40 < tf[("cublas_fp32", "m8192n8192k8192")] < 70
    assert all(r["status"] == "ok" for r in doc["results"])
    # (This file predates the fix that also records the first Triton job's choice, so look at 8192.)
    autotuned = [r for r in doc["results"] if r["impl"].startswith("triton") and r["metric"] == "tflops"
                 and r["case"] == "m8192n8192k8192"]
    assert all(r["stats"]["autotune"] for r in autotuned)


def test_h200_protocol_check_of_the_faulty_fixture():
    """On the H200: wrong and unwritten outputs fail correctness; a crash, a hang, an exception and
    a device-side assert become errors; the run goes on (the job after the CUDA fault is ok)."""
    doc = load_and_validate(RESULTS.parent / "docs" / "protocol" / "h200_faulty_fixture.json")
    assert doc["run"]["env"]["gpu_name"] == "NVIDIA H200"
    status = {r["impl"]: r["status"] for r in doc["results"] if r["metric"] == "latency_ms"}
    assert status == {"good": "ok", "wrong": "failed_correctness", "partial": "failed_correctness",
                      "crash": "error", "hang": "error", "raises": "error", "cuda_fault": "error",
                      "good_after": "ok"}
