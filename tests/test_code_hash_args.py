"""impl_hash covers the Impl's args; runs written before keep the hashes they recorded (neither ingest nor
migration 0005 re-keys them by today's registry); smoke calibration entries of the same code are re-keyed."""
from __future__ import annotations

import json

from sqlalchemy import select, text

from db.engine import make_engine, open_db, upgrade
from db.ingest import ingest_docs
from db.models import Benchmark, Result
from db.series import run_document
from runners.code_hash import closure_hash, impl_hash, with_args
from runners.resultfile import new_run, result_row
from suite.registry import get

GEMM = get("gemm_fp32_emulation")
OLD = "0123456789abcdef"  # a hash as stored before the args counted: one for both variants


def _doc(scheme: bool, hashes=OLD) -> dict:
    run = new_run("nightly", "test", {"commit": None, "branch": None, "dirty": None},
                  {"gpu_name": None, "compute_capability": None, "driver": None, "cuda": None,
                   "torch": None, "triton": None, "python": "3", "cpu": "x"})
    if not scheme:
        del run["config"]["impl_hash"]
    rows = [result_row(GEMM.name, i, "n64", "latency_ms", "ms", "lower", value=1.0, impl_hash=hashes)
            for i in ("triton_bf16x9", "triton_bf16x3", "cublas_bf16x9_kcat")]
    return {"schema": 1, "run": run, "results": rows}


def _stored(url) -> dict[str, set[str]]:
    with open_db(url)() as s:
        out: dict[str, set[str]] = {}
        for impl, h in s.execute(select(Benchmark.impl, Result.impl_hash).join(Benchmark)):
            out.setdefault(impl, set()).add(h)
        return out


def test_variants_of_one_target_differ_and_a_plain_impl_keeps_its_closure_hash():
    x9, x3, cublas = (GEMM.impl(n) for n in ("triton_bf16x9", "triton_bf16x3", "cublas_bf16x9_kcat"))
    assert x9.target == x3.target and x9.args != x3.args
    assert impl_hash(GEMM, x9) != impl_hash(GEMM, x3)
    closure = closure_hash(x9.target.partition(":")[0])
    assert impl_hash(GEMM, x9) == with_args(closure, x9.args)
    assert not cublas.args and impl_hash(GEMM, cublas) == closure_hash(cublas.target.partition(":")[0])
    assert with_args(OLD, {"a": 1, "b": 2}) == with_args(OLD, {"b": 2, "a": 1})  # canonical JSON


def test_an_older_run_keeps_the_hashes_it_recorded(db_url, tmp_path):
    """Stored as recorded: today's registry is not asked what args an older run's rows ran with."""
    ingest_docs(open_db(db_url), [("old", _doc(scheme=False))])
    recorded = {n: {OLD} for n in ("triton_bf16x9", "triton_bf16x3", "cublas_bf16x9_kcat")}
    assert _stored(db_url) == recorded
    # a run of today's writer carrying the hashes it computed is stored as written: one hash per variant,
    # so the variants with args show one version step at the scheme
    current = _doc(scheme=True)
    for r in current["results"]:
        r["impl_hash"] = with_args(OLD, GEMM.impl(r["impl"]).args)
    ingest_docs(open_db(db_url), [("new", current)])
    new = {n: {OLD, with_args(OLD, GEMM.impl(n).args)} for n in ("triton_bf16x9", "triton_bf16x3")}
    assert _stored(db_url) == {**new, "cublas_bf16x9_kcat": {OLD}}
    # a stored run rebuilt as a document and moved to another database keeps its hashes too
    with open_db(db_url)() as s:
        rebuilt = run_document(s, _doc_ids(s)[0])
    other = f"sqlite:///{tmp_path / 'other.db'}"
    ingest_docs(open_db(other), [("rebuilt", rebuilt)])
    assert _stored(other) == recorded


def _doc_ids(session) -> list[str]:
    return [r[0] for r in session.execute(text("SELECT id FROM runs ORDER BY started_at"))]


def test_migration_0005_leaves_stored_rows_as_recorded(tmp_path):
    url = f"sqlite:///{tmp_path / 'kw.db'}"
    engine = make_engine(url)
    upgrade(engine, "0004")
    with engine.begin() as conn:  # rows as stored before 0005: both variants under one hash
        conn.execute(text("INSERT INTO environments (fingerprint, hardware_key, software_key, device, raw) "
                          "VALUES ('f', 'h', 's', 'cpu', '{}')"))
        conn.execute(text("INSERT INTO runs (id, started_at, tier, reason, source, environment_id, content_hash, "
                          "config, ingested_at) VALUES ('r', '2026-11-01', 'nightly', 't', 'kwatch', 1, 'c', '{}', "
                          "'2026-11-01')"))
        for b, impl in enumerate(("triton_bf16x9", "triton_bf16x3", "cublas_bf16x9_kcat"), 1):
            conn.execute(text("INSERT INTO benchmarks (id, technique, impl, case_id, params) "
                              f"VALUES ({b}, '{GEMM.name}', '{impl}', 'n64', '{{}}')"))
            conn.execute(text("INSERT INTO results (run_id, benchmark_id, metric, unit, direction, value, status, "
                              f"impl_hash, params, samples, stats) VALUES ('r', {b}, 'latency_ms', 'ms', 'lower', 1.0, "
                              f"'ok', '{OLD}', '{{}}', '[]', '{{}}')"))
    upgrade(engine, "head")
    assert _stored(url) == {n: {OLD} for n in ("triton_bf16x9", "triton_bf16x3", "cublas_bf16x9_kcat")}


def test_calibration_entries_of_the_same_code_are_re_keyed_others_kept(tmp_path):
    from runners.calibrate import merge

    x9 = GEMM.impl("triton_bf16x9")
    entry = {"check": f"{GEMM.name}/triton_bf16x9/m64n64k64", "tolerance": {"k": 4.0, "floor": 0.0}, "seeds": 40,
             "draws": [[0, 40]], "max_use": 0.1, "max_ratio": 0.4, "s_per_seed": 1.0}
    path = tmp_path / "cal.json"
    path.write_text(json.dumps({"entries": [{**entry, "impl_hash": closure_hash(x9.target.partition(":")[0])},
                                            {**entry, "check": entry["check"] + "x", "impl_hash": OLD}]}))
    merge(path, [])
    got = {e["check"]: e["impl_hash"] for e in json.loads(path.read_text())["entries"]}
    assert got == {entry["check"]: impl_hash(GEMM, x9), entry["check"] + "x": OLD}
