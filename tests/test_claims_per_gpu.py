"""The claims ledger per GPU, on real committed nightlies in SQLite and PostgreSQL: the H200 nightly of
dce11dc beside the H100 nightlies under results/h100. A claim measured on both GPUs has a row per GPU whose
figure, evidence, history and texts are that GPU's only; a claim whose source names the H100 is judged on H100
runs, the H200's figure listed as other hardware; statuses re-derived from what the H200 nightly supports."""
from __future__ import annotations

import glob
import re
from pathlib import Path

import pytest

from db.claims import evaluate, gpu_kind
from db.engine import open_db
from db.ingest import ingest_docs
from suite.claims.spec import CENSORED, CONFOUNDED, NOT_ON_OUR_HARDWARE, PENDING, REPRODUCED
from tests.conftest import ROOT

H200_NIGHTLY = ROOT / "results" / "h200" / "nightly_v4_dce11dc.json.gz"
H100_NIGHTLIES = sorted(Path(p) for p in glob.glob(str(ROOT / "results" / "h100" / "nightly*.json.gz")))
GPU_WORD = re.compile(r"\b([ABH]\d00)\b")


def rows_of(url: str, ids: list[str] | None = None) -> list[dict]:
    from suite.claims.registry import all_claims

    claims = [c for c in all_claims() if ids is None or c.id in ids]
    with open_db(url)() as s:
        return [v.row() for v in evaluate(s, claims)]


def load(url: str, files: list[Path]) -> None:
    from db.validate import load_and_validate

    ingest_docs(open_db(url), [(str(f), load_and_validate(str(f))) for f in files])


def test_gpu_kind_names():
    assert gpu_kind("NVIDIA H100 80GB HBM3") == "H100" and gpu_kind("NVIDIA H200") == "H200"
    assert gpu_kind("NVIDIA A100-SXM4-80GB") == "A100" and gpu_kind(None, "cpu") == "CPU"
    assert gpu_kind("NVIDIA H200", "cpu") == "CPU"  # a CPU run is never GPU hardware


def test_h200_nightly_statuses_the_data_supports(db_url):
    """The H200 nightly alone: the skip reproduces to rounding, the three GEMM comparisons are confounded, the
    RMSNorm pass reproduces on multi-pass code (moot for the one-pass kernel), the sweep's upper edge is
    censored at the grid's top; every row is the H200's."""
    load(db_url, [H200_NIGHTLY])
    by = {r["id"]: r for r in rows_of(db_url)}
    measured = [r for r in by.values() if r["value"] is not None and r["check"] != "arithmetic"]
    assert {r["gpu"] for r in measured} == {"H200"} and len(measured) >= 30
    # every measured value names the runs it came from and when (the Claims page's date and run columns)
    assert all(r["evidence"] and all(e.get("run_id") and e.get("started_at") for e in r["evidence"]) for r in measured)
    skip = by["prefill_last_ffn_skip_exact"]
    assert skip["status"] == REPRODUCED and 0.98 <= skip["value"] <= 1.02 and "bit-identical in" in skip["detail"]
    for cid in ("rope_fused_qkv_removes_cost", "fused_activation_epilogue", "gate_up_merged_one_gemm"):
        assert by[cid]["status"] == CONFOUNDED and "confounded: " in by[cid]["detail"], cid
    rms = by["rmsnorm_saves_a_pass"]
    assert rms["status"] == REPRODUCED and abs(rms["value"] - 1.473) < 0.01 and "moot for one-pass" in rms["detail"]
    assert by["bf16x6_range_upper_edge"]["status"] == CENSORED and by["bf16x6_range_upper_edge"]["value"] == 127
    assert by["fa2_35pct_h100"]["status"] == NOT_ON_OUR_HARDWARE
    assert [o["gpu"] for o in by["fa2_35pct_h100"]["others"]] == ["H200"]
    assert "H100" not in by["fa2_35pct_h100"]["analog_unit"]


@pytest.mark.skipif(not H100_NIGHTLIES, reason="no H100 nightly committed under results/h100")
def test_a_figure_measured_on_one_gpu_never_stands_for_another(db_url):
    load(db_url, [H200_NIGHTLY, *H100_NIGHTLIES])
    rows = rows_of(db_url)
    names = {"H200": "NVIDIA H200", "H100": "NVIDIA H100"}
    per: dict[str, dict[str, dict]] = {}
    for r in rows:
        per.setdefault(r["id"], {})[r["gpu"]] = r
        if r["gpu"] in names:
            other = ({"H200", "H100"} - {r["gpu"]}).pop()
            # the row's evidence, history and texts are its own GPU's
            assert names[other] not in r["detail"], r["id"]
            assert all(e.get("gpu_name") in (None, "CPU") or e["gpu_name"].startswith(names[r["gpu"]])
                       for e in r["evidence"]), r["id"]
            for text in (r["statement"], r["quantity"], r["analog_unit"]):
                assert set(GPU_WORD.findall(text)) <= {r["gpu"]} | set(GPU_WORD.findall(r["hardware"])), (r["id"], text)
    both = [cid for cid, g in per.items() if {"H200", "H100"} <= set(g)]
    assert len(both) >= 30  # every claim our timing tests on any GPU has a row per GPU
    gelu = per["gelu_tanh_much_cheaper"]
    assert gelu["H200"]["value"] != gelu["H100"]["value"]
    # the source names the H100: judged on H100 runs, the H200 listed as other hardware, never its status
    fa2 = per["fa2_35pct_h100"]
    assert set(fa2) == {"H100"} and fa2["H100"]["status"] not in (NOT_ON_OUR_HARDWARE, PENDING)
    assert [o["gpu"] for o in fa2["H100"]["others"]] == ["H200"] and "NVIDIA H200" in fa2["H100"]["others"][0]["detail"]
    mk = per["megakernel_78pct_h100_bandwidth"]
    assert set(mk) == {"H100"} and mk["H100"]["status"] not in (NOT_ON_OUR_HARDWARE, PENDING)
    # a claim judged on the H200 (prefill_cost_model's own timing) is not judged on the H100
    assert all(set(g) <= {"H200", ""} for cid, g in per.items() if cid.startswith("prefill_saving_") and
               per[cid].get("H200", {}).get("check") == "benchmark")


def test_cpu_runs_never_count_as_gpu_hardware(db_url):
    """The H200 nightly beside the committed CPU smoke pair (which runs the exponent sweep under Triton's
    interpreter): the sweep claims are the H200's alone, and a CPU row exists only where the check says
    numerics are the same on the CPU."""
    from suite.claims.registry import get

    load(db_url, [H200_NIGHTLY, ROOT / "results/cpu/smoke_pair/smoke_1.json.gz",
                  ROOT / "results/cpu/smoke_pair/smoke_2.json.gz"])
    rows = rows_of(db_url)
    for cid in ("bf16x6_range_lower_edge", "bf16x6_range_upper_edge", "bf16x6_as_x9_in_range"):
        mine = [r for r in rows if r["id"] == cid]
        assert [r["gpu"] for r in mine] == ["H200"] and " on CPU" not in mine[0]["detail"], cid
    cpu = [r for r in rows if r["gpu"] == "CPU"]
    assert cpu and all(get(r["id"]).check.cpu_ok for r in cpu)
    assert all("NVIDIA" not in r["detail"] for r in cpu)
