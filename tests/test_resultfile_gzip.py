"""Gzip-compressed result files (`*.json.gz`): written by the runner's ResultFile, read by ingest and the detector benchmark."""
import gzip
import json

from tests.conftest import kwatch

from ci.detect_series import result_docs
from db.validate import ResultFileError, load_and_validate
from runners.resultfile import ResultFile, load, new_run


def test_result_file_written_compressed_when_named_gz(smoke_file, tmp_path):
    doc = json.loads(smoke_file.read_text())
    rf = ResultFile(tmp_path / "run.json.gz", doc["run"])
    rf.add(doc["results"])
    raw = (tmp_path / "run.json.gz").read_bytes()
    assert raw[:2] == b"\x1f\x8b"  # the gzip magic: really compressed
    assert json.loads(gzip.decompress(raw)) == json.loads(json.dumps(rf.doc))
    assert load(tmp_path / "run.json.gz")["results"] == load(smoke_file)["results"]


def test_ingest_and_detect_bench_read_gz(smoke_file, tmp_path, db_url):
    gz = tmp_path / "smoke.json.gz"
    gz.write_bytes(gzip.compress(smoke_file.read_bytes()))
    proc = kwatch("ingest", str(gz), "--db", db_url)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    n = len(json.loads(smoke_file.read_text())["results"])
    assert f"stored {n} results" in " ".join(proc.stderr.split())
    again = kwatch("ingest", str(smoke_file), "--db", db_url)  # the same run, uncompressed: already stored
    assert "already stored" in " ".join(again.stderr.split())
    assert [name for name, _ in result_docs([str(gz), str(smoke_file)])] == ["smoke.json.gz", smoke_file.name]


def test_broken_gz_is_refused_by_name(smoke_file, tmp_path):
    gz = tmp_path / "cut.json.gz"
    gz.write_bytes(gzip.compress(smoke_file.read_bytes())[:200])  # truncated transfer
    try:
        load_and_validate(gz)
    except ResultFileError as exc:
        assert "cut.json.gz" in str(exc) and "cannot read" in str(exc)
    else:
        raise AssertionError("a truncated .gz file was accepted")
    plain_named_gz = tmp_path / "plain.json.gz"
    plain_named_gz.write_text(json.dumps(new_run("smoke", "manual", {}, {})))
    proc = kwatch("ingest", str(plain_named_gz), "--db", f"sqlite:///{tmp_path / 'kw.db'}")
    err = " ".join(proc.stderr.split())
    assert proc.returncode == 2 and "plain.json.gz" in err and "nothing was stored" in err, err


def test_repeated_runs_write_numbered_compressed_files(tmp_path):
    import subprocess
    import sys

    from tests.conftest import ROOT

    out = tmp_path / "rep.json.gz"
    p = subprocess.run([sys.executable, "-m", "runners", "run", "--tier", "smoke", "-t", "gemm_fp32_emulation",
                        "-i", "cublas_fp32", "-c", "m64n64k64", "--repeat", "2", "--out", str(out)],
                       capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert p.returncode == 0, p.stdout + p.stderr
    docs = [load(tmp_path / f"rep_{i:02d}.json.gz") for i in (1, 2)]
    assert not out.exists() and docs[0]["run"]["id"] != docs[1]["run"]["id"]
    assert [len(d["results"]) for d in docs] == [len(docs[0]["results"])] * 2 and docs[0]["results"]
    refused = subprocess.run([sys.executable, "-m", "runners", "run", "--tier", "smoke", "--repeat", "2"],
                             capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert refused.returncode == 2 and "--repeat needs --out" in " ".join(refused.stderr.split())
