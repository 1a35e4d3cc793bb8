"""One policy for non-finite and implausible input, on SQLite and PostgreSQL alike: refused naming the
field, the database unchanged; a killed run's file is stored marked incomplete."""
import json

import pytest
from sqlalchemy import func, select

from db.engine import open_db
from db.models import Benchmark, Environment, Result, Run
from db.ingest import ingest_files
from db.validate import ResultFileError
from tests.conftest import kwatch
from tests.ingest_docs import doc, mutated, write


def counts(factory):
    with factory() as s:
        return tuple(s.scalar(select(func.count()).select_from(t)) for t in (Run, Result, Benchmark, Environment))


def _set(path, value):
    def mutate(d):
        target = d
        for p in path[:-1]:
            target = target[p]
        target[path[-1]] = value
    return mutate


BAD = [  # (what, mutation or raw JSON text, the field the refusal must name, words it must say)
    ("nan value", _set(["results", 0, "value"], float("nan")), "results[0].value", "NaN"),
    ("inf value", _set(["results", 0, "value"], float("inf")), "results[0].value", "inf"),
    ("-inf sample", _set(["results", 0, "samples", 1], float("-inf")), "results[0].samples[1]", "-inf"),
    ("nan sample", _set(["results", 2, "samples", 0], float("nan")), "results[2].samples[0]", "NaN"),
    ("beyond float range", _set(["results", 1, "value"], 10**400), "results[1].value", "beyond the float range"),
    ("implausible 1e308", _set(["results", 0, "value"], 1e308), "results[0].value", "plausible"),
    ("NUL in a name", _set(["results", 0, "impl"], "cublas\x00fp32"), "results[0].impl", "NUL"),
    ("NUL in a stats key", _set(["results", 0, "stats", "a\x00b"], 1), "results[0].stats", "NUL"),
    ("negative latency", _set(["results", 0, "value"], -5.0), "results[0].value", "negative time"),
    ("negative samples", _set(["results", 2, "samples"], [-1.0, -2.0]), "results[2].samples", "negative time"),
    ("empty results", _set(["results"], []), "results", "no results"),
    ("run id not an identifier", _set(["run", "id"], "../../etc/passwd"), "run.id", "plain identifier"),
]


def _duplicate(d):
    d["results"].append(dict(d["results"][0]))


BAD.append(("duplicate row", _duplicate, "results[4]", "second row"))


@pytest.mark.parametrize("what,mutate,field,words", BAD, ids=[b[0] for b in BAD])
def test_bad_value_refused_naming_field_database_unchanged(db_url, tmp_path, what, mutate, field, words):
    factory = open_db(db_url)
    ingest_files(factory, [str(write(doc("first-run"), tmp_path / "first.json"))])
    before = counts(factory)
    good = write(doc("good-run"), tmp_path / "good.json")
    bad = write(mutated("bad-run", mutate), tmp_path / "bad.json")
    with pytest.raises(ResultFileError) as exc:
        ingest_files(factory, [str(good), str(bad)])  # all or nothing: the good file is not stored either
    assert f"field {field}" in str(exc.value) and words in str(exc.value), str(exc.value)
    assert counts(factory) == before


def test_literal_nan_and_huge_numbers_in_the_text(tmp_path, db_url):
    """What a hand-edited or foreign file holds: NaN / Infinity literals and 1e400 in the JSON text."""
    factory = open_db(db_url)
    text = json.dumps(doc("literal-run")).replace('"value": 1.5', '"value": 1e400', 1)
    with pytest.raises(ResultFileError, match=r"results\[0\]\.value: is inf"):
        ingest_files(factory, [str(write({}, tmp_path / "a.json", text))])
    text = json.dumps(doc("literal-run")).replace('"value": 1.5', '"value": NaN', 1)
    with pytest.raises(ResultFileError, match=r"results\[0\]\.value: is NaN"):
        ingest_files(factory, [str(write({}, tmp_path / "b.json", text))])
    assert counts(factory) == (0, 0, 0, 0)


def test_partial_run_is_stored_marked_incomplete(db_url, tmp_path):
    d = doc("killed-run")
    d["run"]["finished_at"] = None
    d["results"] = d["results"][:2]
    factory = open_db(db_url)
    [outcome] = ingest_files(factory, [str(write(d, tmp_path / "killed.json"))])
    assert outcome.stored and outcome.incomplete
    with factory() as s:
        assert s.get(Run, "killed-run").finished_at is None


def test_cli_refusal_creates_no_database_and_partial_run_is_shown(tmp_path):
    db = tmp_path / "kw.db"
    bad = write(mutated("bad-run", _set(["results", 0, "value"], float("nan"))), tmp_path / "bad.json")
    proc = kwatch("ingest", str(bad), "--db", f"sqlite:///{db}")
    assert proc.returncode == 2 and "results[0].value" in proc.stderr and "nothing was stored" in proc.stderr
    assert not db.exists()
    d = doc("killed-run")
    d["run"]["finished_at"] = None
    proc = kwatch("ingest", str(write(d, tmp_path / "killed.json")), "--db", f"sqlite:///{db}")
    assert proc.returncode == 0 and "INCOMPLETE" in proc.stderr, proc.stderr


def test_the_fast_screen_never_passes_a_value_the_walk_refuses():
    """check_values skips its per-value walk when the JSON text screen finds nothing suspect: on edge values
    and 20,000 random ones (ints and floats near 1e18 and 2**63, NUL in keys and strings) the screen may send
    a fine document to the walk, never pass a bad one."""
    import random

    from db.validate import _bad_value, _plainly_fine, _walk

    edge = [1e18, 1.0000001e18, -1e19, 1e300, 9.9e17, 10**18, 10**18 + 1, 2**63, 2**63 + 1, -(2**64),
            123456789012345678, 0.0012663539119949568, 1e-300, float("nan"), float("inf"), "a\x00", "1" * 30]
    rng = random.Random(7)
    rand = [rng.choice([rng.uniform(-2e18, 2e18), rng.randint(-2**64, 2**64), 10.0 ** rng.uniform(-20, 20),
                        int(10 ** rng.uniform(15, 20)), "x" * rng.randint(0, 3) + "\x00" * rng.randint(0, 1)])
            for _ in range(20000)]
    passed_bad = []
    for v in edge + rand:
        for d in ({"a": [{"k": v}]}, {"a": {str(v): 1}}, {"a": [1, [v]]}):
            bad = any(_bad_value(x) for _, x in _walk(d, []))
            if bad and _plainly_fine(d):
                passed_bad.append(v)
    assert passed_bad == []
    assert _plainly_fine({"a": [0.0012663539119949568, 1e17, 123456789012345678, "plain text"]})
