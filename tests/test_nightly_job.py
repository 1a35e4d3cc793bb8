"""kwatch nightly: a real (CPU smoke) run end to end, and the night-by-night exit code on replayed H200 noise."""
import json
from pathlib import Path

from ci.nightly_replay import replay_runs
from runners.resultfile import load
from tests.conftest import ROOT, kwatch, write_docs

H200 = ROOT / "results/h200/gemm_fp32_emulation_nightly_foundation.json.gz"


def test_nightly_runs_ingests_detects_and_reports(sqlite_url, tmp_path):
    out = tmp_path / "report"
    p = kwatch("nightly", "--db", sqlite_url, "--tier", "smoke", "-t", "gemm_fp32_emulation", "-i", "cublas_fp32",
               "--out-dir", str(out))
    assert p.returncode == 0, p.stdout + p.stderr
    assert "ingested" in p.stderr and "detected" in p.stderr  # progress shown
    md = (out / "nightly.md").read_text()
    assert "KernelWatch nightly" in md and "ok" in md
    page = (out / "nightly.html").read_text()
    assert "<script" in page and "Plotly" in page and "cublas_fp32" in page and "src=\"http" not in page
    assert json.loads((out / "nightly.json").read_text())["counts"]["ok"] >= 4


def test_nightly_exit_code_follows_new_regressions(sqlite_url, tmp_path):
    nights = replay_runs(load(H200), nights=20, block=20,
                         steps={("triton_dot_tf32", "m8192n8192k8192"): (99, 1.0),
                                ("cublas_tf32", "m2048n2048k2048"): (16, 1.08)})
    files = write_docs(nights, tmp_path)
    assert kwatch("ingest", *files[:16], "--db", sqlite_url).returncode == 0
    codes = []
    for i in (16, 17, 18, 19):
        p = kwatch("nightly", "--db", sqlite_url, "--result", files[i], "--out-dir", str(tmp_path / f"r{i}"))
        codes.append(p.returncode)
    # The step (night 16) alerts on its third night, once; then the change is no longer new. On its first
    # night the gate, with 20 samples a side and the protocol's run-to-run spread, cannot tell it.
    assert codes == [0, 0, 1, 0], codes
    md = (tmp_path / "r18" / "nightly.md").read_text()
    assert "cublas_tf32/m2048n2048k2048/latency_ms" in md and "+7.7%" in md and "regression" in md
    assert "triton_dot_tf32" not in md  # nothing else alerts in the real noise
    assert "cublas_tf32/m2048n2048k2048/latency_ms" in (tmp_path / "r19" / "nightly.md").read_text()


def test_a_timing_regression_against_the_previous_night_waits_for_the_detector(sqlite_url, tmp_path):
    """Real plain do_bench nights: on night 14 a 10% slowdown of a quiet series is regressed against
    night 13, but does not fail the night: one night against one night cannot tell a level a series
    visits now and then from a change; the detector alerts if the new level holds 3 nights. The two
    launch-bound series that scatter as far between nights of the same code (torch_add_x50,
    triton_add_x20: called regressed here before each series carried its own spread) are judged on the
    spread the 14 stored nights taught, and are not."""
    plain = sorted(str(p) for p in (ROOT / "results/h200/plain_noise").glob("night_*.json.gz"))[:15]
    docs = [load(p) for p in plain]
    for r in docs[14]["results"]:
        if r["impl"] == "torch_softmax":
            r["value"] *= 1.10
            r["samples"] = [x * 1.10 for x in r["samples"]]
    files = write_docs(docs, tmp_path)
    assert kwatch("ingest", *files[:14], "--db", sqlite_url).returncode == 0
    p = kwatch("nightly", "--db", sqlite_url, "--result", files[14], "--out-dir", str(tmp_path / "r"))
    assert p.returncode == 0, p.stdout + p.stderr
    report = json.loads((tmp_path / "r" / "nightly.json").read_text())
    regressed = {r["series"].split("/")[1]: r for r in report["against_previous"]["regressed"]}
    assert set(regressed) == {"torch_softmax"}
    from ci.gate import run_gate
    from ci.gate_refs import from_document
    from db.spread_history import from_files
    from db.verdict import Thresholds
    from db.verdict.spread import SpreadTable

    night = [from_document(f, load(f), "file") for f in files[13:15]]
    for spreads, want in ((SpreadTable(), "regressed"), (from_files([Path(f) for f in files[:14]]), "stable")):
        v = {x.key.impl: x for x in run_gate(*night, Thresholds(spreads=spreads)).verdicts
             if x.key.metric == "latency_ms"}
        assert {v[i].status == "regressed" for i in ("torch_add_x50", "triton_add_x20")} == {want == "regressed"}
    assert all("own" in v[i].reason for i in ("torch_add_x50", "triton_add_x20"))
    assert report["failing_against_previous"] == [] and not any(r["fails"] for r in regressed.values())
    md = (tmp_path / "r" / "nightly.md").read_text()
    assert "| `plain_noise/torch_softmax/r4096c4096/latency_ms` | +10." in md and "the detector alerts on a new level on its 3rd night" in md


def test_a_quality_fraction_regression_against_the_previous_night_fails_it_unless_muted(sqlite_url, tmp_path):
    """Two real H200 runs of one commit, bf16_correct_frac 0.999 then 0.5 (judged on its counts): the
    second night fails on the gate's verdict, before the detector could see 3 nights; muted, it does not."""
    from tests.test_verdict import variant

    runs = sorted(str(p) for p in (ROOT / "results/h200/repeats_v3_full").glob("rep_*.json.gz"))[:2]
    first = variant(load(runs[0]), lambda r: r.update(value=0.999) if r["metric"] == "bf16_correct_frac" else None)
    second = variant(load(runs[1]), lambda r: r.update(value=0.5) if r["metric"] == "bf16_correct_frac" else None)
    files = write_docs([first, second], tmp_path)
    assert kwatch("nightly", "--db", sqlite_url, "--result", files[0], "--out-dir", str(tmp_path / "r0")).returncode == 0
    p = kwatch("nightly", "--db", sqlite_url, "--result", files[1], "--out-dir", str(tmp_path / "r1"))
    assert p.returncode == 1, p.stdout + p.stderr
    report = json.loads((tmp_path / "r1" / "nightly.json").read_text())
    failing = {r["series"].rsplit("/", 1)[1] for r in report["failing_against_previous"]}
    assert failing == {"bf16_correct_frac"} and report["new_regressions"] == [] and report["failures"] == []
    assert "new regressions or failures" in (tmp_path / "r1" / "nightly.md").read_text()
    technique = report["failing_against_previous"][0]["series"].split("/")[0]
    assert kwatch("mute", "add", "-t", technique, "-m", "bf16_correct_frac", "--who", "kim", "--why", "probe reworked",
                  "--db", sqlite_url).returncode == 0
    p = kwatch("nightly", "--db", sqlite_url, "--result", files[1], "--out-dir", str(tmp_path / "m"))
    assert p.returncode == 0, p.stdout + p.stderr
    assert "muted by kim" in (tmp_path / "m" / "nightly.md").read_text()
