"""`kwatch host-pairs --db URL`: a team database's newest nightlies of one GPU, every pair on two machines gated
both ways (SQLite and PostgreSQL). On real committed H100 rows (the 18175d6 extract's techniques on its host and on
1661801's host) the pair passes; a third host whose copy of the same kernels fails one correctness check fails both
of its pairs on that series and nothing else."""
from __future__ import annotations

import copy
import gzip
import json

import pytest

from ci.gate_refs import load_document
from ci.host_pairs import main
from tests.conftest import ROOT, kwatch

H100 = ROOT / "results/h100"
TECHNIQUES = {"attention_dense", "gemm_fp32_emulation"}


def _subset(doc: dict, subjects: set) -> dict:
    d = copy.deepcopy(doc)
    d["results"] = [r for r in d["results"] if r["technique"] in TECHNIQUES and (r["technique"], r["impl"],
                                                                                 r["case"]) in subjects]
    return d


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """Three result files of the same kernels on three machines; the third fails one check."""
    out = tmp_path_factory.mktemp("host_pairs")
    a = load_document(H100 / "nightly_v4_18175d6_extract.json.gz")
    b = load_document(H100 / "nightly_v4_1661801_b.json.gz")
    subjects = {(r["technique"], r["impl"], r["case"]) for r in a["results"]} & \
               {(r["technique"], r["impl"], r["case"]) for r in b["results"]}
    a, b = _subset(a, subjects), _subset(b, subjects)
    c = copy.deepcopy(b)
    c["run"]["id"] = "c" + b["run"]["id"][1:]
    c["run"]["env"]["os"] = "Linux-6.18.44-fc-v9999-gpu-x86_64-with-glibc2.39"
    bad = next(r for r in c["results"] if r["impl"] == "triton_bf16x9" and r["metric"] == "rel_err"
               and r["status"] == "ok")
    bad["status"] = "failed_correctness"
    paths = []
    for name, d in (("a", a), ("b", b), ("c", c)):
        p = out / f"{name}.json.gz"
        with gzip.open(p, "wt") as f:
            json.dump(d, f)
        paths.append(p)
    return paths, f"{bad['technique']}/{bad['impl']}/{bad['case']}", c["run"]["id"][:12]


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_host_pairs_from_a_database(backend, files, tmp_path, request):
    paths, bad, third = files
    url = f"sqlite:///{tmp_path / 'kw.db'}" if backend == "sqlite" else request.getfixturevalue("pg_url")
    proc = kwatch("ingest", "--db", url, *map(str, paths))
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = tmp_path / "pairs.json"
    assert main(["--db", url, "--gpu", "H100", "--json", str(out)]) == 1
    pairs = json.loads(out.read_text())
    assert len(pairs) == 3  # a-b, a-c, b-c: three machines
    failed = [p for p in pairs if not p["passed"]]
    assert len(failed) == 2 and all(third in p["a"] + p["b"] for p in failed), failed
    assert all(s.startswith(bad) for p in failed for s in p["unchanged_blocking"]), failed
    assert main(["--db", url, "--gpu", "H200"]) == 2  # no runs of that GPU: one line, not a pass
