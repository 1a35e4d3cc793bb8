"""The nightly report judges each night against the previous one with the gate's verdict (db.verdict):
expected failures and probe points on their own line, "nothing compared" said as such, and each
listed change with when (run date, commit) and against what."""
import copy
import json
import uuid
from datetime import datetime, timedelta

from tests.conftest import ROOT, kwatch
from tests.test_verdict import doc

GEMM = ROOT / "results/h200/protocol_v3/v3_gemm_fp32_emulation.json.gz"


def test_nightly_report_tells_the_truth(sqlite_url, tmp_path):
    first = doc(GEMM)
    second = copy.deepcopy(first)
    second["run"]["id"] = uuid.uuid4().hex
    second["run"]["started_at"] = (datetime.fromisoformat(first["run"]["started_at"]) + timedelta(days=1)).isoformat()
    second["run"]["git"]["commit"] = "abcdef1234567890"
    broken = next(r for r in second["results"] if r["impl"] == "cublas_fp32" and r["metric"] == "rel_err"
                  and r["status"] == "ok" and r["stats"].get("tolerance"))
    broken["value"] = broken["stats"]["tolerance"] * 3  # stored ok, but beyond its tolerance
    paths = []
    for i, d in enumerate((first, second)):
        paths.append(tmp_path / f"night{i}.json")
        paths[-1].write_text(json.dumps(d))

    p = kwatch("nightly", "--db", sqlite_url, "--result", str(paths[0]), "--out-dir", str(tmp_path / "r0"))
    assert p.returncode == 0, p.stdout + p.stderr
    md = (tmp_path / "r0" / "nightly.md").read_text()
    assert "nothing compared" in md and "no new regressions" not in md
    assert "### Expected failures and probe points (measurements, not failing)" in md and "probe point" in md
    assert "### Failures" not in md  # 922 probe points and known-wrong impls are not "failing"
    report = json.loads((tmp_path / "r0" / "nightly.json").read_text())
    assert sum(e["series"] for e in report["expected_failures"]) >= 900 and report["failures"] == []

    p = kwatch("nightly", "--db", sqlite_url, "--result", str(paths[1]), "--out-dir", str(tmp_path / "r1"))
    assert p.returncode == 1, p.stdout + p.stderr  # a new failure
    md = (tmp_path / "r1" / "nightly.md").read_text()
    assert f"against the previous night ({first['run']['started_at'][:10]}" in md
    assert f"`{first['run']['id']}`" in md and "series compared by the gate's rules" in md
    label = f"gemm_fp32_emulation/cublas_fp32/{broken['case']}/rel_err"
    assert f"| `{label}` | failed correctness | yes |" in md
