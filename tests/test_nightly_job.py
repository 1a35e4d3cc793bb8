"""kwatch nightly: a real (CPU smoke) run end to end, and the night-by-night exit code on replayed H200 noise."""
import json

from ci.nightly_replay import replay_runs
from tests.conftest import ROOT, kwatch, write_docs

H200 = ROOT / "results/h200/gemm_fp32_emulation_nightly_foundation.json"


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
    nights = replay_runs(json.loads(H200.read_text()), nights=16, block=20,
                         steps={("triton_dot_tf32", "m8192n8192k8192"): (99, 1.0),
                                ("cublas_tf32", "m2048n2048k2048"): (12, 1.08)})
    files = write_docs(nights, tmp_path)
    assert kwatch("ingest", *files[:12], "--db", sqlite_url).returncode == 0
    codes = []
    for i in (12, 13, 14, 15):
        p = kwatch("nightly", "--db", sqlite_url, "--result", files[i], "--out-dir", str(tmp_path / f"r{i}"))
        codes.append(p.returncode)
    # The step (night 12) alerts on its third night, once; then the change is no longer new.
    assert codes == [0, 0, 1, 0], codes
    md = (tmp_path / "r14" / "nightly.md").read_text()
    assert "cublas_tf32/m2048n2048k2048/latency_ms" in md and "+8." in md and "regression" in md
    assert "triton_dot_tf32" not in md  # nothing else alerts in the real noise
    assert "cublas_tf32/m2048n2048k2048/latency_ms" in (tmp_path / "r15" / "nightly.md").read_text()
