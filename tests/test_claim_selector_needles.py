"""selector_5x_dense_keeps_needles judged on the committed H200 run, on SQLite and PostgreSQL: the
Triton MSA selector counts while it keeps the needles; once it loses them, only the needle-keeping
torch selector is left, and it is too slow for 5x."""
import copy
import gzip
import json
from pathlib import Path

import pytest

from db.claims import evaluate
from db.engine import open_db
from db.ingest import ingest_docs
from suite.claims.registry import get
from suite.claims.spec import NOT_REPRODUCED, REPRODUCED

RUN = Path(__file__).resolve().parent.parent / "results" / "h200" / "sparse_prefill_nightly_25571d0.json.gz"


def run_doc(run_id: str | None = None, minutes: int = 0) -> dict:
    d = json.loads(gzip.decompress(RUN.read_bytes()))
    if run_id:  # a later copy of the run
        d["run"]["id"] = run_id
        d["run"]["started_at"] = d["run"]["started_at"][:11] + f"23:{minutes:02d}:00+00:00"
    return d


def latency(doc: dict, technique: str, impl: str) -> float:
    [v] = [r["value"] for r in doc["results"] if r["technique"] == technique and r["impl"] == impl
           and r["metric"] == "latency_ms" and r["params"].get("s") == 65536]
    return v


def status(url: str):
    with open_db(url)() as s:
        [v] = evaluate(s, [get("selector_5x_dense_keeps_needles")])
    return v


def test_the_fast_selector_counts_only_while_it_keeps_the_needles(db_url):
    factory = open_db(db_url)
    doc = run_doc()
    ingest_docs(factory, [("h200", doc)])
    v = status(db_url)
    dense = latency(doc, "attention_dense", "sdpa_cudnn")
    assert v.status == REPRODUCED
    assert v.value == pytest.approx(dense / latency(doc, "sparse_prefill", "triton_msa_fused"))
    assert "counted: triton_msa_fused" in v.detail
    lost = run_doc("needles-lost", 10)
    for r in lost["results"]:  # the fused selector now misses every needle in the first half
        if r["impl"] == "triton_msa_fused" and r["metric"] == "retrieval" and r["params"]["depth"] < 0.5:
            r["value"] = 0.0
    ingest_docs(factory, [("lost", lost)])
    v = status(db_url)
    assert v.status == NOT_REPRODUCED and "counted: triton_msa_index" in v.detail
    assert v.value == pytest.approx(dense / latency(doc, "sparse_prefill", "triton_msa_index"))
