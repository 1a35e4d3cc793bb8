"""The run's ceilings and each throughput row's share of one: which ceiling a row is judged against,
the schema (old files stay valid), and the share shown in the summary, the gate report (from a file
and from SQLite / PostgreSQL) and the dashboard's query, on the committed H200 run."""
import copy
import gzip
import json
from pathlib import Path

import pytest

from ci.gate import run_gate
from ci.gate_refs import resolve
from ci.report_gate import to_json, to_markdown
from db.engine import open_db
from db.ingest import ingest_docs
from db.queries import run_results
from db.validate import ResultFileError, validate
from runners.ceilings import add_shares
from runners.summary import full_table, summary_lines
from suite.ceilings import CEILINGS, ceiling_for, ceilings_from_rows, share_text
from suite.registry import techniques

ROOT = Path(__file__).resolve().parent.parent
H200 = ROOT / "results" / "h200" / "ceilings"
CEIL = {"bf16_tflops": {"value": 783.0, "unit": "TFLOP/s"}, "fp32_tflops": {"value": 51.0, "unit": "TFLOP/s"},
        "mufu_exp2_texp_per_s": {"value": 3.87, "unit": "Texp/s"}}


def _doc(name: str) -> dict:
    return json.loads(gzip.decompress((H200 / name).read_bytes()))


def _row(metric: str, value: float = 70.0, status: str = "ok", **stats) -> dict:
    return {"metric": metric, "status": status, "value": value, "stats": dict(stats)}


def test_each_row_gets_the_ceiling_its_technique_names():
    emu, exp = techniques()["gemm_fp32_emulation"], techniques()["exp_approx"]
    rows = [_row("tflops"), _row("latency_ms", 1.0), _row("tflops", status="failed_correctness"),
            _row("tflops", probe=True)]
    add_shares(emu, emu.impl("triton_bf16x9"), rows, CEIL)
    c = rows[0]["stats"]["ceiling"]
    assert (c["key"], c["divisor"]) == ("bf16_tflops", 9.0)
    assert c["share"] == pytest.approx(70.0 / (783.0 / 9)) and share_text(rows[0]["stats"]) == "80% of bf16/9"
    assert all("ceiling" not in r["stats"] for r in rows[1:])  # latency, a failed check, a probe point: none
    fp32 = [_row("tflops", 51.0)]
    add_shares(emu, emu.impl("cublas_fp32"), fp32, CEIL)
    assert share_text(fp32[0]["stats"]) == "100% of fp32"
    tf32 = [_row("tflops")]
    add_shares(emu, emu.impl("cublas_tf32"), tf32, CEIL)  # no TF32 ceiling is measured: no share
    assert "ceiling" not in tf32[0]["stats"]
    texp = [_row("texp_per_s", 4.6)]
    add_shares(exp, exp.impl("triton_mufu"), texp, CEIL)  # the default for texp_per_s
    assert texp[0]["stats"]["ceiling"]["key"] == "mufu_exp2_texp_per_s"
    cpu = [_row("tflops")]
    add_shares(emu, emu.impl("triton_bf16x9"), cpu, None)  # a CPU run measures none
    assert cpu[0]["stats"] == {} and share_text(cpu[0]["stats"]) == "-"


def test_dense_equivalent_rates_say_so_beside_their_share():
    sparse, monarch, w4 = (techniques()[n] for n in ("sparse_gemm", "monarch", "w4a16_gemm"))
    tile = [_row("tflops", 3515.0)]  # a tile-skipping kernel at 10 % density, counted as the dense GEMM
    add_shares(sparse, sparse.impl("triton_tile_skip"), tile, CEIL)
    assert share_text(tile[0]["stats"]) == "449% of bf16, dense-equiv."
    mon = [_row("tflops", 78.3)]
    add_shares(monarch, monarch.impl("torch_monarch"), mon, CEIL)
    assert share_text(mon[0]["stats"]).endswith(", dense-equiv.")
    # a dense kernel is never dense-equivalent, even in a technique that is: above its ceiling it is impossible
    for tech in (sparse, monarch):
        cublas = [_row("tflops", 850.0)]
        add_shares(tech, tech.impl("cublas_dense"), cublas, CEIL)
        assert share_text(cublas[0]["stats"]) == "109% of bf16 IMPOSSIBLE"
        assert "dense_equivalent" not in cublas[0]["stats"]["ceiling"]
        assert "109% of the bf16_tflops ceiling" in cublas[0]["stats"]["impossible"]
    dense = [_row("tflops", 391.5)]
    add_shares(w4, w4.impl("cublas_bf16"), dense, CEIL)
    assert share_text(dense[0]["stats"]) == "50% of bf16" and "dense_equivalent" not in dense[0]["stats"]["ceiling"]


def test_every_tflops_technique_names_a_measured_ceiling():
    for tech in techniques().values():
        if not any(m.name == "tflops" for m in tech.metrics):
            continue
        keys = {ceiling_for(tech, impl, "tflops") for impl in tech.impls} - {None}
        assert keys, f"{tech.name}: its tflops rows have no ceiling (Technique.ceilings)"
        assert all(k in CEILINGS and d >= 1 for k, d in keys), (tech.name, keys)


def test_schema_takes_ceilings_and_files_without_them():
    doc = _doc("ceilings_exp_ozaki.json.gz")
    validate(doc)
    old = copy.deepcopy(doc)
    del old["run"]["ceilings"]
    validate(old)  # files written before ceilings stay valid
    bad = copy.deepcopy(doc)
    bad["run"]["ceilings"]["bf16_tflops"]["value"] = "fast"
    with pytest.raises(ResultFileError, match="ceilings"):
        validate(bad)


def test_committed_h200_run_has_every_ceiling_and_shares():
    doc = _doc("ceilings_exp_ozaki.json.gz")
    ceil = doc["run"]["ceilings"]
    assert set(CEILINGS) <= set(ceil) and doc["run"]["git"]["commit"]
    assert 600 < ceil["bf16_tflops"]["value"] < 1000 and 3000 < ceil["copy_gbps"]["value"] < 4800
    shared = [r for r in doc["results"] if r["stats"].get("ceiling")]
    assert shared and all(r["metric"] in ("tflops", "texp_per_s") for r in shared)
    mufu = next(r for r in shared if r["impl"] == "triton_mufu" and r["case"] == "sum_t64_n8m")
    assert 0.8 < mufu["stats"]["ceiling"]["share"] < 1.2  # the MUFU-only kernel runs at the MUFU ceiling
    assert set(ceilings_from_rows(doc["results"])) == {"fp64_tflops", "mufu_exp2_texp_per_s"}


def test_summary_and_table_show_the_share_and_a_dash_on_the_cpu():
    doc = _doc("ceilings_exp_ozaki.json.gz")
    text = "\n".join(summary_lines(doc))
    assert "ceilings: bf16 7" in text and "% of fp64" in text and "copy 41" in text
    assert "% of mufu" in full_table(doc["results"])
    cpu = copy.deepcopy(doc)
    cpu["run"]["ceilings"] = None
    for r in cpu["results"]:
        r["stats"].pop("ceiling", None)
    text = "\n".join(summary_lines(cpu))
    assert "ceilings: - (none measured" in text and "ms; -" in text and "% of" not in text


def test_gate_report_shows_shares_from_a_file_and_from_the_database(db_url):
    path = H200 / "ceilings_emulation.json.gz"
    base = resolve(str(path))
    md = to_markdown(run_gate(base, base))
    assert "share of ceiling" in md and "% of bf16/9" in md and "candidate ceilings: bf16 78" in md
    ingest_docs(open_db(db_url), [(str(path), _doc(path.name))])
    stored = resolve(_doc(path.name)["run"]["id"], db_url)
    result = run_gate(stored, stored)
    md = to_markdown(result)
    assert "% of bf16/9" in md and "candidate ceilings: bf16 78" in md  # read back from the rows' shares
    shares = to_json(result)["ceiling_shares"]
    assert shares["gemm_fp32_emulation/cublas_fp32/m8192n8192k8192/tflops"]["candidate"].endswith("of fp32")
    frame = run_results(db_url, _doc(path.name)["run"]["id"])
    tfl = frame[frame["metric"] == "tflops"]
    assert all(isinstance(c, dict) and c["share"] > 0 for c in tfl["ceiling"])
    assert frame[frame["metric"] == "rel_err"]["ceiling"].isna().all()


def test_trend_hover_carries_the_share(sqlite_url):
    from dashboard.plots import with_spread
    from dashboard.trend_chart import prepare, trend_figure
    from db.queries import series_points

    doc = _doc("ceilings_emulation.json.gz")
    ingest_docs(open_db(sqlite_url), [("h200", doc)])
    frame = run_results(sqlite_url, doc["run"]["id"])
    ids = tuple(int(i) for i in frame[(frame["impl"] == "triton_bf16x9")
                                     & (frame["case_id"] == "m8192n8192k8192")]["benchmark_id"].unique())
    for x in ("started_at", "commit"):
        fig = trend_figure(prepare(with_spread(series_points(sqlite_url, ids, "tflops"))), x=x, unit="TFLOP/s")
        [share] = [c[9] for tr in fig.data if tr.customdata is not None for c in tr.customdata]
        assert share.endswith("% of bf16/9") and "share of ceiling" in fig.data[0].hovertemplate
    latency = prepare(with_spread(series_points(sqlite_url, ids, "latency_ms")))
    assert {c[9] for tr in trend_figure(latency).data if tr.customdata is not None for c in tr.customdata} == {"-"}


def test_a_past_commits_tree_gets_the_ceiling_names_todays_runners_import(tmp_path):
    import subprocess

    from runners.trees import commit_info, export_tree

    old = "9fd8447"  # before ceilings existed
    if subprocess.run(["git", "cat-file", "-e", f"{old}^{{commit}}"], cwd=ROOT).returncode:
        pytest.skip("clone without this history")
    tree = export_tree(commit_info(old), tmp_path)
    assert (tree / "suite" / "ceilings.py").read_text() == (ROOT / "suite" / "ceilings.py").read_text()
    proc = subprocess.run(["python3", "-S", "-c", "import sys; sys.path[:0] = ['.']; import suite.ceilings"],
                          cwd=tree, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
