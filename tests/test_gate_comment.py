"""Issue 40, point 4: the PR comment is under GitHub's 65,536-character limit by construction, cuts whole
rows only, closes every <details>, names what it left to the artifact, and shows the verdict, counts in
series, every blocking row with its caveats, ambiguous and vanished series first (real H200 nightlies)."""
from __future__ import annotations

import copy
import re
import uuid

import pytest

from ci.gate import run_gate
from ci.gate_refs import from_document, load_document
from ci.report_gate import COMMENT_LIMIT, to_markdown
from tests.conftest import ROOT

V4 = ROOT / "results/h200"
LIMIT = COMMENT_LIMIT - 1000


@pytest.fixture(scope="module")
def pair():
    return [load_document(V4 / f"nightly_v4_{c}.json.gz") for c in ("905ed2f", "cef2892")]


def side(d):
    return from_document(d["run"]["id"], d, "file")


def _check(md: str) -> None:
    assert len(md) <= LIMIT
    assert md.count("<details>") == md.count("</details>")
    rows = [line for line in md.splitlines() if line.startswith("| ")]
    assert all(line.endswith("|") or "⚠️" in line for line in rows)  # no row cut mid-way


def test_a_real_nightly_pair_fits_and_says_what_it_left_out(pair):
    r = run_gate(side(pair[0]), side(pair[1]))
    full = to_markdown(r)
    assert len(full) > 700_000
    md = to_markdown(r, LIMIT, "the artifact")
    _check(md)
    assert md.startswith("## KernelWatch gate: ✅ **PASS**")
    assert re.search(r"- 1643 series compared: 1643 stable", md)
    assert re.search(r"- \d+ ambiguous series \(not blocking", md.split("###")[0])
    assert re.search(r"_\d+ more series in the artifact_", md)


def test_every_blocking_row_is_shown_with_its_caveats_before_anything_else(pair):
    def slow(r):
        if r["metric"] == "latency_ms" and r.get("samples") and r["technique"] == "gemm_fp64_ozaki":
            r["samples"] = [x * 1.3 for x in r["samples"]]
    cand = copy.deepcopy(pair[1])
    cand["run"]["id"] = uuid.uuid4().hex
    cand["results"] = [x for x in cand["results"] if x["technique"] != "w4a16_gemm"]
    for x in cand["results"]:
        slow(x)
    r = run_gate(side(pair[0]), side(cand))
    blocking = [v for v in r.verdicts if v.blocking]
    assert len(blocking) >= 10 and len(r.vanished) == 120
    md = to_markdown(r, LIMIT, "the artifact")
    _check(md)
    head = md.split("### Blocking")[0]
    assert "❌ **FAIL**" in head and f"**{len(blocking)} blocking series**" in head
    assert "**120 series of the baseline vanished**" in head
    section = md.split("### Blocking")[1].split("###")[0]
    assert sum(line.startswith("| 🔴") for line in section.splitlines()) == len(blocking)
    assert section.count("timed on different input instances") == len(blocking)  # each row's caveat
    assert "### Vanished from the candidate (120 series, blocking)" in md


def test_a_budget_smaller_than_the_blocking_rows_still_closes_and_counts(pair):
    def slow(r):
        if r["metric"] == "latency_ms" and r.get("samples"):
            r["samples"] = [x * 1.3 for x in r["samples"]]
    cand = copy.deepcopy(pair[1])
    cand["run"]["id"] = uuid.uuid4().hex
    for x in cand["results"]:
        slow(x)
    r = run_gate(side(pair[0]), side(cand))
    md = to_markdown(r, 20_000, "the artifact")
    assert len(md) <= 20_000 and md.count("<details>") == md.count("</details>")
    assert re.search(r"_\d+ more blocking series in the artifact_", md)
