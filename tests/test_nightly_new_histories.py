"""The nightly report says which series began a new history (here: H200 runs moving from timing protocol v2 to v3)."""
import json

from tests.conftest import ROOT, kwatch

V2 = sorted((ROOT / "results/h200/repeats_v2").glob("rep_*.json.gz"))
V3 = sorted((ROOT / "results/h200/repeats_v3").glob("rep_*.json.gz"))


def test_a_protocol_change_is_reported_as_new_histories(tmp_path):
    db = f"sqlite:///{tmp_path / 'kw.db'}"
    p = kwatch("ingest", *map(str, V2[:6] + V3[:1]), "--db", db)
    assert p.returncode == 0, p.stderr
    out = tmp_path / "report"
    p = kwatch("nightly", "--db", db, "--result", str(V3[1]), "--out-dir", str(out))
    assert (out / "nightly.json").exists(), p.stdout + p.stderr
    groups = json.loads((out / "nightly.json").read_text())["new_histories"]
    assert len(groups) == 1
    g = groups[0]
    assert g["what"] == "timing protocol"
    assert g["change"] == "cuda-events+l2flush+graph/v2 -> cuda-events+l2flush+graph/v3"
    assert g["nights"] == 2 and g["needed"] == 8  # db.detector: 5 reference nights + 3 of a new level
    assert g["series"] >= 28  # the 28 re-timed latency series, and what is derived from their timing
    md = (out / "nightly.md").read_text()
    assert "New histories: detection starts again" in md and "graph/v2 -> cuda-events+l2flush+graph/v3" in md


def test_a_series_with_its_own_long_history_is_not_listed(tmp_path):
    db = f"sqlite:///{tmp_path / 'kw.db'}"
    p = kwatch("ingest", *map(str, V2[:6]), "--db", db)
    assert p.returncode == 0, p.stderr
    out = tmp_path / "report"
    kwatch("nightly", "--db", db, "--result", str(V2[6]), "--out-dir", str(out))
    assert json.loads((out / "nightly.json").read_text())["new_histories"] == []
    assert "New histories" not in (out / "nightly.md").read_text()
