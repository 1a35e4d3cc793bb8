"""Each series judged on its own run-to-run spread (db.verdict.spread, db/spread_history.py), on the
committed H200 runs: two whole nightlies of the same kernels pass the gate with the spreads learned
without them, the shipped table is what the committed results give, SQLite and PostgreSQL learn the
same table as the files, and quality fractions whose trials share a seed are judged on n / phi."""
from __future__ import annotations

import math

import pytest

from ci.gate import run_gate
from ci.gate_refs import from_document, load_document
from db.engine import open_db
from db.ingest import ingest_files
from db.spread_history import builder_of, from_files, from_session, stamp, table_for_url
from db.verdict import Thresholds
from db.verdict.spread import COMMITTED, SpreadTable, committed, key_of
from tests.conftest import ROOT
from tests.test_gate_two_hosts import one_host

H200 = ROOT / "results/h200"
V4_PAIR = ("nightly_v4_3508815.json.gz", "nightly_v4_905ed2f.json.gz")  # kernels unchanged between them


@pytest.fixture(scope="module")
def learned():
    """A Builder over every committed H200 result file (read once for the module)."""
    return builder_of([H200])


@pytest.fixture(scope="module")
def v4_pair():
    return [from_document(n, load_document(H200 / n), "file") for n in V4_PAIR]


def blocking(result) -> set[str]:
    return {v.key.label() for v in result.verdicts if v.blocking}


def test_shipped_table_is_learned_from_the_committed_results(learned):
    """db/verdict/run_spread.json is what `python -m db.spread_history results/h200` writes today."""
    b, n = learned
    fresh, shipped = b.table(f"{n} result files"), SpreadTable.from_json(COMMITTED.read_text())
    assert fresh.timings.keys() == shipped.timings.keys() and fresh.fractions.keys() == shipped.fractions.keys()
    for mine, theirs in ((fresh.timings, shipped.timings), (fresh.fractions, shipped.fractions)):
        for k, e in mine.items():
            assert theirs[k].df == e.df and theirs[k].ss == pytest.approx(e.ss, rel=1e-6, abs=1e-9), k


def test_two_nightlies_of_the_same_kernels_pass_with_spreads_learned_without_them(learned, v4_pair):
    """Held out: the table never saw either run. With one spread per protocol 10+ series block; with
    each series' own spread at most the two that history gave no sign of (docs/verdict.md)."""
    a, b = v4_pair
    assert a.run["git"]["commit"] != b.run["git"]["commit"]
    assert {r["impl_hash"] for r in a.rows if r["technique"] == "decode_step"} == \
           {r["impl_hash"] for r in b.rows if r["technique"] == "decode_step"}
    held_out = learned[0].table("held out", skip_runs={a.run_id, b.run_id})
    # as they ran, on two machines (another VM kernel build): unchanged code never blocks, even on the floor
    assert "platform" in run_gate(a, b).other_host
    assert not blocking(run_gate(a, b, Thresholds(spreads=SpreadTable(), unsteady_cv=math.inf)))
    b = one_host(a, b)  # what the spreads alone do, as if one machine had run both
    floor = blocking(run_gate(a, b, Thresholds(spreads=SpreadTable(), unsteady_cv=math.inf)))
    mine = blocking(run_gate(a, b, Thresholds(spreads=held_out)))
    assert len(floor) >= 15
    # without history, the series whose samples scatter far beyond the protocol's spread wait instead
    assert len(blocking(run_gate(a, b, Thresholds(spreads=SpreadTable())))) < len(floor) // 3
    assert any("torch_eager" in s or "block_scaled_formats/torch_" in s for s in floor)
    assert len(mine) <= 4 and mine < floor
    assert not any("block_scaled_formats/torch_" in s or "decode_step/torch_eager" in s for s in mine)


def test_eager_decode_is_judged_on_its_own_spread(v4_pair):
    """decode_step/torch_eager moves 30 % between runs of the same code: its verdict says so."""
    a, b = v4_pair
    v = {x.key.label(): x for x in run_gate(a, b).verdicts}["decode_step/torch_eager/llama1b_kv1024/latency_ms"]
    assert not v.blocking and "this series' own" in v.reason
    s = committed().timing(key_of({"technique": "decode_step", "impl": "torch_eager", "case": "llama1b_kv1024",
                                   "metric": "latency_ms", "stats": {"protocol": v.key.protocol}},
                                  v.key.hardware_key), 0.028)
    assert s is not None and s.sigma > 0.15 and s.quantile > 3.0


def test_a_new_case_of_a_noisy_implementation_takes_its_siblings_spread(v4_pair):
    hw = v4_pair[0].hardware_key
    row = {"technique": "block_scaled_formats", "impl": "torch_mxfp4", "case": "never_measured_case",
           "metric": "latency_ms", "stats": {"protocol": "cuda-events+l2read+place8/v4"}}
    s = committed().timing(key_of(row, hw), 0.01)
    assert s is not None and s.sigma > 0.10 and s.history_df == 0


def test_needle_grid_flip_between_same_code_nightlies_is_not_a_regression():
    """18 -> 5 of 33 needle cells (one seed per run) in two nightlies of one commit: on raw counts
    Fisher's test calls it a regression; on n / phi it is not."""
    a, b = (from_document(n, load_document(H200 / n), "file") for n in ("nightly_9cc68a3.json.gz", "nightly_6c16be7.json.gz"))
    for side in (a, b):
        side.rows = [r for r in side.rows if r["technique"] == "needle_retrieval"]
    label = "needle_retrieval/triton_mean_pool/ctx4k/grid/recall"
    raw = {v.key.label(): v for v in run_gate(a, b, Thresholds(spreads=SpreadTable())).verdicts}[label]
    v = {x.key.label(): x for x in run_gate(a, b).verdicts}[label]
    assert (raw.k_baseline, raw.k_candidate, raw.n_candidate) == (18, 5, 33) and raw.blocking
    assert not v.blocking and "binomial variance" in v.reason


def test_database_learns_the_same_table_as_the_files(db_url):
    """Three committed v4 runs ingested into SQLite / PostgreSQL: from_session equals from_files, and
    the gate with --db judges with it (table_for_url)."""
    files = [H200 / "serving" / n for n in ("fused_norms_nightly_v4_bb7c0f1_2.json.gz",
                                            "fused_norms_nightly_v4_bb7c0f1_3.json.gz",
                                            "serving_formats_nightly_v4_bb7c0f1.json.gz")]
    from dashboard import data

    factory = open_db(db_url)
    ingest_files(factory, [str(files[0])])
    assert stamp(db_url)[0] == 1 and data.thresholds(db_url).spreads.source.endswith("(1 runs)")
    ingest_files(factory, [str(f) for f in files[1:]])
    assert stamp(db_url)[0] == 3 and data.thresholds(db_url).spreads.source.endswith("(3 runs)")  # relearned
    want = from_files(files)
    with factory() as s:
        got = from_session(s)
    assert want.timings and got.timings.keys() == want.timings.keys()
    assert got.fractions.keys() == want.fractions.keys()
    for k, e in want.timings.items():
        assert got.timings[k].df == e.df and math.isclose(got.timings[k].ss, e.ss, rel_tol=1e-6, abs_tol=1e-12)
    merged = table_for_url(db_url)
    assert merged.source.endswith("database (3 runs)") and len(merged.timings) >= len(committed().timings)


@pytest.mark.parametrize("text", ["", "{not json", '{"schema": 1, "rows": [["timing", "a", 1]]}', '{"rows": 3}'])
def test_an_unreadable_table_judges_on_the_protocol_spreads_and_says_so(tmp_path, capsys, text):
    from db.verdict.spread import load

    path = tmp_path / "run_spread.json"
    path.write_text(text)
    t = load(path)
    assert not t.timings and not t.fractions and "unreadable" in t.source
    assert "python -m db.spread_history" in capsys.readouterr().err
    assert load(tmp_path / "absent.json").source == "none"
