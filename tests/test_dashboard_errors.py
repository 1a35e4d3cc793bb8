"""A database that breaks under the running dashboard (overwritten with garbage) gives each page one
friendly line, without a traceback or a server path; the details go to the server log."""
import pytest

from tests.ingest_docs import doc, write
from tests.test_dashboard_pages import PAGES, run_page


@pytest.fixture
def overwritten_url(tmp_path):
    from db.engine import make_engine, open_db
    from db.ingest import ingest_files

    path = tmp_path / "kw.db"
    url = f"sqlite:///{path}"
    ingest_files(open_db(url), [str(write(doc("a-run"), tmp_path / "a.json"))])
    make_engine(url).dispose()  # no pooled connection of this process keeps reading the old file
    path.write_bytes(b"overwritten by something else " * 200)
    for side in ("-wal", "-shm"):
        (tmp_path / f"kw.db{side}").unlink(missing_ok=True)
    return url, str(tmp_path)


@pytest.mark.parametrize("page", [p for p in PAGES if p != "cost_model"])
def test_overwritten_database_is_one_line_in_the_page(page, overwritten_url, monkeypatch, caplog):
    url, folder = overwritten_url
    at = run_page(url, page, monkeypatch)  # asserts that no exception reached the page
    shown = " ".join(e.value for e in at.error)
    assert "could not read the database" in shown and "not a database" in shown, shown
    assert "Traceback" not in shown and folder not in shown.replace(url, "")
