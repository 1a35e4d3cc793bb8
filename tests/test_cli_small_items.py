"""Small things a first user meets: short run ids as gate refs, the gate's output with --markdown,
detect without nightly runs, JSON and schema-version messages."""
import json

from tests.conftest import kwatch
from tests.ingest_docs import doc, write


def test_gate_takes_short_run_ids_and_keeps_markdown_in_its_file(tmp_path):
    db = f"sqlite:///{tmp_path / 'kw.db'}"
    a, b = doc("a" * 32), doc("b" * 32)
    b["run"]["started_at"] = "2026-11-30T22:00:00+00:00"
    assert kwatch("ingest", str(write(a, tmp_path / "a.json")), str(write(b, tmp_path / "b.json")),
                  "--db", db).returncode == 0
    md = tmp_path / "gate.md"
    p = kwatch("gate", "--baseline", "a" * 12, "--candidate", "b" * 12, "--db", db, "--markdown", str(md))
    assert p.returncode == 0, p.stderr
    assert p.stdout == "" and md.read_text().strip()  # the report is in its file, not on stdout
    last = p.stderr.strip().splitlines()[-1]
    assert last.startswith("gate: PASS") and "{" not in last, last


def test_detect_without_nightly_runs_says_so(tmp_path):
    db = f"sqlite:///{tmp_path / 'kw.db'}"
    assert kwatch("ingest", str(write(doc("r1"), tmp_path / "r.json")), "--db", db).returncode == 0
    p = kwatch("detect", "--db", db, "--json", str(tmp_path / "d.json"))
    assert p.returncode == 0 and "no nightly runs in the database yet" in p.stderr, p.stderr
    assert json.loads((tmp_path / "d.json").read_text())["changes"] == []


def test_truncated_json_and_future_schema_messages(tmp_path):
    db = f"sqlite:///{tmp_path / 'kw.db'}"
    cut = tmp_path / "cut.json"
    cut.write_text(json.dumps(doc("r1"))[:300])
    p = kwatch("ingest", str(cut), "--db", db)
    assert p.returncode == 2 and "not valid JSON" in p.stderr and "at at" not in p.stderr, p.stderr
    future = doc("r2")
    future["schema"] = 2
    p = kwatch("ingest", str(write(future, tmp_path / "v2.json")), "--db", db)
    assert p.returncode == 2 and "unsupported schema version 2" in p.stderr, p.stderr
    assert not (tmp_path / "kw.db").exists()
