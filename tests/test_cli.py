"""The kwatch command line end to end: run, list, ingest, db upgrade."""
import json

from tests.conftest import kwatch


def test_smoke_run_writes_ok_results(smoke_file):
    doc = json.loads(smoke_file.read_text())
    assert doc["schema"] == 1
    statuses = {r["status"] for r in doc["results"]}
    assert statuses == {"ok"}, statuses  # on the CPU every implementation must pass (Triton interpreted)
    impls = {r["impl"] for r in doc["results"]}
    assert {"cublas_fp32", "triton_dot_bf16x6", "triton_bf16x9"} <= impls
    for key in ("id", "started_at", "tier", "reason", "git", "env"):
        assert key in doc["run"]
    assert {"commit", "branch", "dirty"} <= set(doc["run"]["git"])


def test_ingest_twice_and_refusals(smoke_file, tmp_path):
    db = f"sqlite:///{tmp_path / 'kw.db'}"
    first = kwatch("ingest", str(smoke_file), "--db", db)
    assert first.returncode == 0 and "stored" in first.stderr, first.stderr
    second = kwatch("ingest", str(smoke_file), "--db", db)
    assert second.returncode == 0 and "already stored" in second.stderr
    bad = tmp_path / "bad.json"
    doc = json.loads(smoke_file.read_text())
    doc["run"]["id"] = "other"
    doc["results"][2]["direction"] = "sideways"
    bad.write_text(json.dumps(doc))
    refused = kwatch("ingest", str(bad), "--db", db)
    assert refused.returncode == 2
    assert "results[2].direction" in refused.stderr and "nothing was stored" in refused.stderr


def test_list_and_unknown_technique(tmp_path):
    out = kwatch("list")
    assert out.returncode == 0 and "gemm_fp32_emulation" in out.stdout and "cublas_fp32" in out.stdout
    bad = kwatch("run", "-t", "no_such_technique", "--db", f"sqlite:///{tmp_path / 'kw.db'}")
    assert bad.returncode != 0 and "unknown technique" in bad.stderr


def test_db_upgrade(db_url):
    proc = kwatch("db", "upgrade", "--db", db_url)
    assert proc.returncode == 0, proc.stderr
