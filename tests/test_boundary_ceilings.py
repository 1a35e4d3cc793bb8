"""No number beyond the machine: ceilings are upper bounds (best measured, raised to the datasheet),
a rate above one is flagged IMPOSSIBLE in the row, the summary and the table, and the committed H200
nightlies, judged against these bounds, have no impossible row although some exceed the measured ones."""
import copy
import gzip
import json
from pathlib import Path

import pytest

from runners.ceilings import BOUNDS, _upper, add_shares, datasheet_for
from runners.guard_floor import upper_copy_gbps
from runners.summary import full_table, summary_lines
from suite.ceilings import CEILINGS, share_text
from suite.registry import techniques

ROOT = Path(__file__).resolve().parent.parent
NIGHTLIES = sorted((ROOT / "results" / "h200").glob("nightly_v4_*.json.gz"))


def test_datasheets_by_device_name():
    assert datasheet_for("NVIDIA H200")["copy_gbps"] == 4800.0
    h100 = datasheet_for("NVIDIA H100 80GB HBM3")
    assert (h100["name"], h100["copy_gbps"], h100["bf16_tflops"], h100["fp32_tflops"]) == ("H100 SXM", 3350.0, 989.0, 67.0)
    assert datasheet_for("NVIDIA H100 PCIe")["name"] == "H100 PCIe"
    assert datasheet_for("NVIDIA A100-SXM4-80GB") is None and datasheet_for(None) is None


def test_a_ceiling_is_the_higher_of_the_best_measurement_and_the_datasheet():
    sheet = datasheet_for("NVIDIA H200")
    c = _upper("bf16_tflops", 795.8, "TFLOP/s", "m", sheet)
    assert (c["value"], c["measured"], c["source"]) == (989.0, 795.8, "datasheet H200")
    c = _upper("copy_gbps", 5000.0, "GB/s", "m", sheet)  # measured above the sheet: the measurement bounds
    assert (c["value"], c["source"]) == (5000.0, "measured (best of shapes and repetitions)")
    c = _upper("mufu_exp2_texp_per_s", 3.9, "Texp/s", "m", sheet)  # no datasheet figure
    assert c["value"] == 3.9 and c["source"].startswith("measured")
    assert upper_copy_gbps(4300.0, "cpu") == (4300.0, "measured")


def _bounded(run_ceilings: dict) -> dict:
    sheet = datasheet_for("NVIDIA H200")
    return {k: _upper(k, v["value"], v["unit"], v.get("method", ""), sheet)
            for k, v in run_ceilings.items() if k in CEILINGS}


@pytest.mark.parametrize("path", NIGHTLIES[-2:], ids=lambda p: p.name)
def test_committed_h200_nightlies_have_no_rate_beyond_the_machine(path):
    doc = json.loads(gzip.decompress(path.read_bytes()))
    ceilings, techs = _bounded(doc["run"]["ceilings"]), techniques()
    over_measured = flagged = 0
    for r in doc["results"]:
        c = r["stats"].get("ceiling")
        if r["status"] != "ok" or not isinstance(c, dict) or r["technique"] not in techs:
            continue
        tech = techs[r["technique"]]
        impl = next((i for i in tech.impls if i.name == r["impl"]), None)
        if impl is None:
            continue
        over_measured += c["share"] > 1 and c["key"] in BOUNDS and not c.get("dense_equivalent")
        row = copy.deepcopy(r)
        row["stats"].pop("ceiling")
        add_shares(tech, impl, [row], ceilings)
        flagged += bool(row["stats"].get("impossible"))
        if c["key"] in BOUNDS and not row["stats"]["ceiling"].get("dense_equivalent"):
            assert row["stats"]["ceiling"]["share"] <= 1.0, (r["technique"], r["impl"], r["case"])
    assert over_measured >= 1  # e.g. SwiGLU above the measured copy bandwidth: the old ceiling was no bound
    assert flagged == 0


def _swiglu_row(gbps: float) -> dict:
    return {"run_id": "r", "technique": "swiglu", "impl": "triton_fused", "case": "t8192i8192", "metric": "gbps",
            "unit": "GB/s", "direction": "higher", "value": gbps, "samples": [gbps], "stats": {}, "status": "ok",
            "error": None, "params": {}}


def test_a_rate_above_its_bound_is_impossible_in_the_row_summary_and_table():
    swiglu = techniques()["swiglu"]
    ceilings = _bounded({"copy_gbps": {"value": 4300.0, "unit": "GB/s"}})
    rows = [_swiglu_row(5100.0), _swiglu_row(4400.0)]
    rows[1]["case"] = "t4096i14336"
    add_shares(swiglu, swiglu.impl("triton_fused"), rows, ceilings)
    assert "106% of the copy_gbps ceiling 4800 GB/s (datasheet H200)" in rows[0]["stats"]["impossible"]
    assert share_text(rows[0]["stats"]) == "106% of copy IMPOSSIBLE"
    assert "impossible" not in rows[1]["stats"] and share_text(rows[1]["stats"]) == "92% of copy"
    doc = {"run": {"id": "0123456789abcdef", "tier": "nightly", "config": {"seed": 1}, "finished_at": "x",
                   "ceilings": ceilings}, "results": rows}
    text = "\n".join(summary_lines(doc))
    assert "1 job(s) report a rate beyond the machine (IMPOSSIBLE" in text and "swiglu/triton_fused/t8192i8192" in text
    assert "IMPOSSIBLE" in full_table(rows).splitlines()[2]


def test_gate_report_and_dashboard_query_mark_an_impossible_rate(tmp_path, sqlite_url):
    from ci.gate import run_gate
    from ci.gate_refs import resolve
    from ci.report_gate import to_markdown
    from db.engine import open_db
    from db.ingest import ingest_docs
    from db.queries import run_results

    path = ROOT / "results" / "h200" / "ceilings" / "ceilings_emulation.json.gz"
    doc = json.loads(gzip.decompress(path.read_bytes()))
    row = next(r for r in doc["results"] if r["metric"] == "tflops" and r["impl"] == "cublas_fp32")
    row["stats"]["ceiling"].update(share=1.31, impossible=True)
    row["stats"]["impossible"] = "tflops 66.8 is 131% of the fp32_tflops ceiling 51 TFLOP/s (measured)"
    cand = tmp_path / "cand.json"
    cand.write_text(json.dumps(doc))
    md = to_markdown(run_gate(resolve(str(path)), resolve(str(cand))))
    assert "### IMPOSSIBLE: rates beyond the machine (1)" in md and "131% of the fp32_tflops ceiling" in md
    assert "131% of fp32 IMPOSSIBLE" in md
    ingest_docs(open_db(sqlite_url), [("cand", doc)])
    frame = run_results(sqlite_url, doc["run"]["id"])
    marks = [share_text({"ceiling": c}) for c in frame[frame["impl"] == "cublas_fp32"]["ceiling"] if isinstance(c, dict)]
    assert "131% of fp32 IMPOSSIBLE" in marks


def test_a_ceiling_share_row_beyond_the_bound_is_impossible_and_floors_apply_to_kernelbench_only():
    from runners.guard_floor import floor_violation
    from runners.job import _ceiling_row
    from runners.timing import Protocol

    tech = techniques()["swiglu"]
    impl, case = tech.impls[0], tech.cases_for("smoke")[0]
    gb = tech.bytes(case.params) / 1e9
    stats = {"median": gb / 1e6 * 1e3}  # 1e6 GB/s: beyond any memory
    row = _ceiling_row(tech, impl, case, None, [stats["median"]], stats, "cpu")
    assert row["stats"]["share_of_upper"] > 1 and row["stats"]["ceiling_upper_source"] == "measured"
    assert "of the copy ceiling's upper bound (measured)" in row["stats"]["impossible"]
    assert row["value"] == pytest.approx(row["stats"]["gbps"] / row["stats"]["ceiling_gbps"])  # the series value
    assert floor_violation(tech, case, 1e-9, "cuda", Protocol()) is None  # a suite technique: flagged, not refused
