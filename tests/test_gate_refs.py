"""Gate REFs resolved in the database (run id, branch, commit), reports stored, bad refs refused."""
import json

from sqlalchemy import select

from tests.conftest import ROOT, kwatch
from runners.resultfile import load

H200 = ROOT / "results/h200/gemm_fp32_emulation_nightly_foundation.json.gz"


def _variant(tmp_path, run_id, branch, commit, slow):
    doc = load(H200)
    doc["run"]["id"], doc["run"]["git"] = run_id, {"commit": commit, "branch": branch, "dirty": False}
    for r in doc["results"]:
        if slow and r["impl"] == "cublas_fp32" and r["metric"] == "latency_ms":
            r["samples"] = [x * 1.2 for x in r["samples"]]
            r["value"] *= 1.2
    f = tmp_path / f"{run_id}.json"
    f.write_text(json.dumps(doc))
    return f


def test_refs_resolve_in_the_database_and_reports_are_stored(db_url, tmp_path):
    base = _variant(tmp_path, "main-night", "main", "a" * 40, slow=False)
    cand = _variant(tmp_path, "pr-head", "feature/x", "b" * 40, slow=True)
    assert kwatch("ingest", str(base), str(cand), "--db", db_url).returncode == 0
    for b, c in (("main", "bbbbbbbbbb"), ("main-night", "pr-head"), ("a" * 40, "feature/x")):
        p = kwatch("gate", "--baseline", b, "--candidate", c, "--db", db_url, "--json", str(tmp_path / "g.json"),
                   "--store")
        assert p.returncode == 1, (b, c, p.stdout + p.stderr)
        report = json.loads((tmp_path / "g.json").read_text())
        assert report["baseline"]["run_id"] == "main-night" and report["candidate"]["origin"] == "database"
        assert {s.split("/")[1] for s in report["blocking"]} == {"cublas_fp32"}
    from db.engine import open_db
    from db.models_ci import GateReport

    with open_db(db_url)() as s:
        stored = s.scalars(select(GateReport)).all()
        assert len(stored) == 3 and {g.verdict for g in stored} == {"fail"}
        assert stored[0].report["counts"]["regressed"] == 2  # latency and its tflops


def test_unknown_ref_is_refused_clearly(tmp_path):
    p = kwatch("gate", "--baseline", "no-such-branch", "--candidate", str(H200), "--db",
               f"sqlite:///{tmp_path / 'kw.db'}")
    assert p.returncode == 2 and "no-such-branch" in p.stderr and "neither a file nor a run id" in p.stderr
