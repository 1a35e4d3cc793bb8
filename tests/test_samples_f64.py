"""results.samples_f64 (db.samples): migration 0006's backfill, ingest, the dashboard's read, the verdict on arrays."""
from __future__ import annotations

import json
import math
import random

import numpy as np
import pandas as pd
import pytest
from alembic import command
from sqlalchemy import inspect, text

from db.samples import pack, pack_json, unpack
from tests import ingest_docs as docs

STORED = ["[]", "[1, 2.5, 3]", "[0.1, null, 7e-300]", json.dumps([random.Random(0).gauss(5, 1) for _ in range(5000)])]
ROWS = [0, 1, 2] * 2000 + [3] * 5  # which STORED each row holds: more rows than one backfill batch


def same(a: np.ndarray, b) -> bool:
    """Equal as float64 arrays, NaN equal to NaN (a null sample is stored as NaN)."""
    b = np.asarray(b if b is not None else [], dtype=float)
    return a.dtype == np.float64 and a.shape == b.shape and bool(np.array_equal(a, b, equal_nan=True))


def test_pack_unpack_round_trip():
    xs = [1, 2.5, None, float("nan"), 1e-300, -0.0, 3e38]
    got = unpack(pack(xs))
    assert same(got, [1.0, 2.5, math.nan, math.nan, 1e-300, -0.0, 3e38]) and math.copysign(1, got[5]) < 0
    assert len(pack(xs)) == 8 * len(xs) and pack([1.0]) == b"\0" * 6 + b"\xf0?"  # little-endian on any host
    assert unpack(pack([])).size == 0 and unpack(pack(None)).size == 0 and unpack(None).size == 0
    assert same(unpack(pack_json("[1, NaN, null]")), [1.0, math.nan, math.nan])  # json's NaN literal read
    assert same(unpack(pack_json([4, 5])), [4.0, 5.0])  # a list a driver decoded


def test_migration_backfills_every_row_from_its_json(db_url):
    from db.engine import alembic_config, make_engine, upgrade

    engine = make_engine(db_url)
    upgrade(engine, "0005")
    with engine.begin() as conn:  # rows as stored before 0006: samples only as JSON
        conn.execute(text("INSERT INTO environments (fingerprint, hardware_key, software_key, device, raw) "
                          "VALUES ('f', 'h', 's', 'cpu', '{}')"))
        conn.execute(text("INSERT INTO runs (id, started_at, tier, reason, source, environment_id, content_hash, "
                          "config, ingested_at) VALUES ('r', '2026-11-01', 'nightly', 't', 'kwatch', 1, 'c', '{}', "
                          "'2026-11-01')"))
        conn.execute(text("INSERT INTO benchmarks (id, technique, impl, case_id, params) "
                          "VALUES (1, 't', 'i', 'c', '{}')"))
        conn.execute(text("INSERT INTO results (id, run_id, benchmark_id, metric, unit, direction, value, status, "
                          "params, samples, stats) VALUES (:id, 'r', 1, :m, 'ms', 'lower', 1.0, 'ok', '{}', :s, '{}')"),
                     [{"id": i + 1, "m": f"m{i}", "s": STORED[k]} for i, k in enumerate(ROWS)])
    upgrade(engine, "head")
    with engine.connect() as conn:
        rows = conn.execute(text("SELECT id, samples_f64 FROM results ORDER BY id")).all()
    assert len(rows) == len(ROWS)
    want = [json.loads(x) for x in STORED]
    for i, blob in rows:
        assert blob is not None and same(unpack(blob), want[ROWS[i - 1]])
    with engine.begin() as conn:  # downgrade drops the column
        cfg = alembic_config(engine)
        cfg.attributes["connection"] = conn
        command.downgrade(cfg, "0005")
    with engine.connect() as conn:
        assert "samples_f64" not in {c["name"] for c in inspect(conn).get_columns("results")}
    engine.dispose()


def test_ingest_writes_the_binary_and_the_dashboard_reads_it(db_url):
    from db import queries
    from db.engine import make_engine, open_db
    from db.ingest import ingest_docs

    d = docs.doc("run-a")
    d["results"][0]["samples"] = [0.5, None, 2.25, 1e-7]
    d["results"][1]["samples"] = []
    ingest_docs(open_db(db_url), [("a", d)])
    engine = make_engine(db_url)
    with engine.connect() as conn:
        stored = conn.execute(text("SELECT id, samples, samples_f64 FROM results ORDER BY id")).all()
    assert len(stored) == len(d["results"])
    for (rid, js, blob), x in zip(stored, d["results"]):
        js = json.loads(js) if isinstance(js, str) else js
        assert js == x["samples"] and same(unpack(blob), x["samples"])
    ids = [r[0] for r in stored]
    # a row some other writer stored without the binary is read from its JSON instead
    with engine.begin() as conn:
        conn.execute(text("UPDATE results SET samples_f64 = NULL WHERE id = :i"), {"i": ids[2]})
    engine.dispose()
    got = queries.results_by_id(db_url, ids).set_index("result_id").loc[ids]
    alone = queries.samples_by_id(db_url, ids)  # the pooled rows' read: the samples and nothing else
    for rid, x in zip(ids, d["results"]):
        s = got.loc[rid, "samples"]
        assert isinstance(s, np.ndarray) and same(s, x["samples"]) and same(alone[rid], x["samples"])
    # the JSON list itself, as the other readers see it, is unchanged
    pts = queries.run_results(db_url, "run-a").set_index("result_id").loc[ids]
    assert [list(s) for s in pts["samples"]] == [x["samples"] for x in d["results"]]


def test_verdict_on_arrays_equals_verdict_on_lists():
    from dashboard import verdict
    from db.verdict import judge

    rng = random.Random(3)
    base = [rng.gauss(1.0, 0.02) for _ in range(400)] + [None]
    cands = {"same": [rng.gauss(1.0, 0.02) for _ in range(300)], "slower": [rng.gauss(1.2, 0.02) for _ in range(300)],
             "few": [1.0, 1.1], "none": []}

    def r(samples, run, when):
        return {"result_id": when, "benchmark_id": 1, "technique": "t", "impl": "i", "case_id": "c",
                "metric": "latency_ms", "unit": "ms", "direction": "lower", "value": 1.0, "status": "ok",
                "error": None, "protocol": "cuda-events+l2flush+graph/v3", "impl_version": 1, "impl_hash": "h",
                "params": {}, "samples": samples, "tolerance": None, "ceiling": None, "stats": {}, "run_id": run,
                "started_at": pd.Timestamp("2026-11-01") + pd.Timedelta(hours=when), "git_commit": "c",
                "tier": "nightly", "hardware_key": "hw", "software_key": "sw", "hardware": "H", "software": "S"}

    for name, c in cands.items():
        as_list = [judge({"metric": "latency_ms", "unit": "ms", "status": "ok", "samples": base, "value": 1.0,
                          "stats": {}}, {"metric": "latency_ms", "unit": "ms", "status": "ok", "samples": c,
                                         "value": None if not c else 1.0, "stats": {}})]
        as_array = [judge({"metric": "latency_ms", "unit": "ms", "status": "ok", "samples": unpack(pack(base)),
                           "value": 1.0, "stats": {}},
                          {"metric": "latency_ms", "unit": "ms", "status": "ok", "samples": unpack(pack(c)),
                           "value": None if not c else 1.0, "stats": {}})]
        assert as_list[0].as_dict() == as_array[0].as_dict(), name
    # two runs a side pooled: arrays concatenated give the lists' verdict, median and counts (a pooled
    # list holding a null sample has no median: only the arrays, where it is NaN, pool it)
    base = base[:-1]
    for name, c in cands.items():
        half = len(base) // 2
        frames = {}
        for kind, f in (("list", list), ("array", lambda xs: unpack(pack(xs)))):
            b = pd.DataFrame([r(f(base[:half]), "b1", 1), r(f(base[half:]), "b2", 2)])
            k = pd.DataFrame([r(f(c[:len(c) // 2]), "c1", 3), r(f(c[len(c) // 2:]), "c2", 4)])
            frames[kind] = verdict.compare(b, k)
        pd.testing.assert_frame_equal(frames["list"], frames["array"], check_exact=True)
        assert frames["array"]["n_baseline"].iloc[0] == len(base), name
    assert (verdict.compare(*[pd.DataFrame([r(unpack(pack(base)), "b", 1)]),
                              pd.DataFrame([r(unpack(pack(cands["slower"])), "c", 2)])])["status"] == "regressed").all()


def test_pooled_arrays_are_one_float64_array():
    from dashboard.verdict import _pool

    got = _pool([unpack(pack([1, 2])), None, unpack(pack([3.5]))])
    assert isinstance(got, np.ndarray) and same(got, [1, 2, 3.5])
    assert _pool([[1, 2], [3]]) == [1, 2, 3]


@pytest.mark.parametrize("n", [0, 1, 100])
def test_unpack_shares_the_bytes(n):
    blob = pack(range(n))
    a = unpack(blob)
    assert a.size == n and not a.flags.writeable  # a view on the fetched bytes, never written to
