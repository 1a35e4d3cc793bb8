"""`kwatch claims` in every format, from a database and from result files; docs/claims.md is current."""
import json
from pathlib import Path

from tests.conftest import ROOT, kwatch

H200_FILE = Path(__file__).parent / "fixtures" / "claims" / "h200_gemm_foundation.json"


def test_claims_json_from_database(tmp_path):
    url = f"sqlite:///{tmp_path / 'kw.db'}"
    assert kwatch("ingest", str(H200_FILE), "--db", url).returncode == 0
    proc = kwatch("claims", "--format", "json", "--db", url)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    by_id = {c["id"]: c for c in doc["claims"]}
    assert sum(doc["counts"].values()) == len(doc["claims"]) >= 45
    assert by_id["bf16x9_up_to_3x"]["status"] == "not reproducible on our hardware"
    assert by_id["bf16x9_up_to_3x"]["projection"]["label"] == "projection"
    assert by_id["prefill_saving_chat_10pct"]["status"] == "reproduced"


def test_claims_markdown_and_table_from_result_files(tmp_path):
    out = tmp_path / "claims.md"
    proc = kwatch("claims", "--results", str(H200_FILE), "--format", "markdown", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    text = out.read_text()
    assert "# Claims ledger" in text and "**projection** (not a measurement)" in text
    assert "h200_gemm_foundation.json" in text and "| contradicted |" in text
    table = kwatch("claims", "--results", str(H200_FILE), "--status", "contradicted")
    assert table.returncode == 0 and "rowmajor_2x2" in table.stdout and "prefill_sav" not in table.stdout
    assert kwatch("claims", "--format", "yaml", "--results", str(H200_FILE)).returncode != 0


def test_committed_claims_doc_lists_every_claim():
    """docs/claims.md (generated from results/h200) carries every claim of the ledger."""
    from suite.claims.registry import all_claims

    text = (ROOT / "docs" / "claims.md").read_text()
    assert "kwatch claims --results results/h200" in text
    missing = [c.id for c in all_claims() if f"### {c.id}" not in text]
    assert not missing, f"regenerate docs/claims.md; missing {missing}"


def test_results_folder_skips_json_that_is_not_a_result_file(tmp_path):
    (tmp_path / "a_run.json").write_text(H200_FILE.read_text())
    (tmp_path / "raw_microbench.json").write_text('{"do_bench_ms": [1.0, 2.0]}')
    proc = kwatch("claims", "--results", str(tmp_path), "--format", "markdown")
    assert proc.returncode == 0, proc.stderr
    assert "a_run.json" in proc.stdout and "Skipped" in proc.stdout and "raw_microbench.json" in proc.stdout
    bad = tmp_path / "broken.json"
    bad.write_text('{"schema": 1, "run": {}}')
    proc = kwatch("claims", "--results", str(tmp_path))
    assert proc.returncode == 2 and "broken.json" in proc.stderr


def test_results_folder_reads_compressed_result_files(tmp_path):
    import gzip

    (tmp_path / "a_run.json.gz").write_bytes(gzip.compress(H200_FILE.read_bytes()))
    plain = kwatch("claims", "--results", str(H200_FILE), "--format", "markdown")
    packed = kwatch("claims", "--results", str(tmp_path), "--format", "markdown")
    assert packed.returncode == 0, packed.stderr
    assert "a_run.json.gz" in packed.stdout and "Skipped" not in packed.stdout
    # the same measurements give the same verdicts whether the file is compressed or not
    verdicts = lambda out: [l for l in out.splitlines() if l.startswith("|")]
    assert verdicts(packed.stdout) == verdicts(plain.stdout) and verdicts(plain.stdout)
