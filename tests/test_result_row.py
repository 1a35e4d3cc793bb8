"""One row constructor for every writer, checked against the schema that sits beside it."""
from __future__ import annotations

import pytest

from db.validate import ResultFileError, load_and_validate, validate
from runners.resultfile import ResultFile, new_run, result_row


def _doc(rows):
    run = new_run("smoke", "test", {"commit": None, "branch": None, "dirty": None},
                  {"gpu_name": None, "compute_capability": None, "driver": None, "cuda": None,
                   "torch": None, "triton": None, "python": "3", "cpu": "x"})
    return {"schema": 1, "run": run, "results": rows}


def test_rows_validate_and_carry_extra_fields(tmp_path):
    rows = [result_row("needle_retrieval", "triton_mean_pool", "ctx4k", "retrieval", "1", "higher",
                       value=0.75, params={"ctx": 4096}, counts={"k": 3, "n": 4}),
            result_row("gemm_fp32_emulation", "cublas_fp32", "m64n64k64", "latency_ms", "ms", "lower",
                       status="error", error="boom")]
    rf = ResultFile(tmp_path / "r.json.gz", _doc([])["run"])
    rf.add(rows)
    rf.finish()
    doc = load_and_validate(tmp_path / "r.json.gz")
    assert doc["results"][0]["counts"] == {"k": 3, "n": 4}
    assert doc["results"][1]["value"] is None and doc["results"][1]["samples"] == []


def test_constructor_and_schema_refuse_bad_rows():
    with pytest.raises(ValueError, match="status"):
        result_row("t", "i", "c", "latency_ms", "ms", "lower", status="fine")
    ok_without_value = result_row("t", "i", "c", "latency_ms", "ms", "lower")  # status ok needs a value
    with pytest.raises(ResultFileError, match=r"results\[0\]\.value"):
        validate(_doc([ok_without_value]))
