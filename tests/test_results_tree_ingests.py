"""The committed results/ tree ingests as a whole, as a user would (`kwatch ingest results/**/*.json*`),
and ingesting it again stores nothing and skips re-validating what is stored."""
import time

from tests.conftest import ROOT, kwatch

# every result file; study records (results/**/studies/, not result files: ingest refuses them) are not
FILES = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "results").rglob("*")
               if p.name.endswith((".json", ".json.gz")) and "studies" not in p.relative_to(ROOT).parts)


def test_results_tree_ingests_whole_and_again_as_a_no_op(tmp_path):
    db = f"sqlite:///{tmp_path / 'kw.db'}"
    t0 = time.monotonic()
    first = kwatch("ingest", *FILES, "--db", db)
    first_s = time.monotonic() - t0
    assert first.returncode == 0, first.stderr[-3000:]
    assert first.stderr.count(": stored ") + first.stderr.count("already stored") == len(FILES)
    t0 = time.monotonic()
    again = kwatch("ingest", *FILES, "--db", db)
    again_s = time.monotonic() - t0
    assert again.returncode == 0 and again.stderr.count("already stored") == len(FILES), again.stderr[-3000:]
    assert again_s < first_s, (again_s, first_s)  # stored files are not validated again
