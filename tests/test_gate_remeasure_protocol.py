"""The gate does not re-measure a candidate timed under another version of the timing protocol."""
from pathlib import Path

import pytest
import torch

from ci.gate_refs import from_document, load_document
from ci.gate_remeasure import host_matches, remeasure

H200 = Path(__file__).resolve().parent.parent / "results" / "h200"


def test_an_h200_run_under_protocol_v2_is_not_remeasured_by_v4_code():
    path = H200 / "repeats_v2" / "rep_01.json.gz"
    cand = from_document(str(path), load_document(path), "file")
    assert cand.run["config"]["protocol"]["cuda_version"] == 2
    reason = host_matches(cand)
    assert reason == "the candidate was timed under CUDA timing protocol v2, this checkout times v4"
    out = remeasure(cand, {("exp_approx", "triton_mufu", "elem_n16m")})
    assert out.host_problem == reason and not out.rows


@pytest.mark.skipif(torch.cuda.is_available(), reason="asserts what a host without a GPU answers")
def test_a_run_under_this_protocol_is_judged_on_its_host_instead():
    path = H200 / "repeats_v3" / "rep_01.json.gz"
    cand = from_document(str(path), load_document(path), "file")
    assert host_matches(cand) == "the candidate was timed under CUDA timing protocol v3, this checkout times v4"
    cand.run["config"]["protocol"]["cuda_version"] = 4  # as if timed by this checkout's protocol
    assert host_matches(cand) == "this host has no cuda device"
