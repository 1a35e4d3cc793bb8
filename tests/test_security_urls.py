"""A database URL with a password is never shown: a real PostgreSQL role with a password, every place
the URL is printed (CLI lines, error messages, the dashboard's start-up line, sidebar and empty-page
notes in a real Chromium)."""
from __future__ import annotations

import uuid

import pytest

from db.urls import mask_url, scrub
from tests.conftest import PG_ADMIN, _pg_available, kwatch
from tests.test_dashboard_browser import driver  # noqa: F401  (the shared headless Chromium)


@pytest.mark.parametrize("url, shown", [
    ("postgresql://kw:s3cret@db:5432/kw", "postgresql://kw:***@db:5432/kw"),
    ("postgresql+psycopg://kw:p@ss@db/kw", "postgresql+psycopg://kw:***@db/kw"),
    ("postgresql://kw@db/kw?password=abc&sslmode=require", "postgresql://kw@db/kw?password=***&sslmode=require"),
    ("postgresql://db/kw?sslpassword=x;token=y", "postgresql://db/kw?sslpassword=***;token=***"),
    ("sqlite:///kwatch.db", "sqlite:///kwatch.db"),
    ("postgresql://kw@db/kw", "postgresql://kw@db/kw"),
])
def test_mask_url(url, shown):
    assert mask_url(url) == shown


def test_log_records_are_scrubbed(caplog):
    import logging

    from db.urls import ScrubFilter

    log = logging.getLogger("kwatch.test_scrub")
    log.addFilter(ScrubFilter())
    try:
        raise ValueError("cannot parse 'postgresql://kw:pw9@db/kw'")
    except ValueError:
        log.exception("open %s failed", "postgresql://kw:pw9@db/kw")
    assert len([r for r in caplog.records if r.name == "kwatch.test_scrub"]) == 1
    assert "pw9" not in caplog.text and "postgresql://kw:***@db/kw" in caplog.text and "ValueError" in caplog.text


def test_scrub_masks_urls_inside_a_message():
    msg = "Could not parse SQLAlchemy URL from string 'postgresql://a:pw1@c/d'; also \"mysql://x:pw2@z/w\"."
    out = scrub(msg)
    assert "pw1" not in out and "pw2" not in out and "postgresql://a:***@c/d" in out


@pytest.fixture
def secret_url():
    """A database owned by a new login role with a password; its URL carries the password."""
    why = _pg_available()
    if why:
        pytest.skip(why)
    from sqlalchemy import create_engine, text

    from db.engine import make_engine

    tag = uuid.uuid4().hex[:10]
    role, password, name = f"kw_sec_{tag}", f"pw-{tag}-Sekr3t", f"kw_sec_{tag}"
    admin = create_engine(PG_ADMIN, isolation_level="AUTOCOMMIT")
    with admin.connect() as c:
        c.execute(text(f"CREATE ROLE {role} LOGIN PASSWORD '{password}'"))
        c.execute(text(f'CREATE DATABASE "{name}" OWNER {role}'))
    host = PG_ADMIN.split("@", 1)[1].rsplit("/", 1)[0]
    url = f"postgresql://{role}:{password}@{host}/{name}"
    try:
        yield url, password
    finally:
        make_engine(url).dispose()
        with admin.connect() as c:
            c.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
            c.execute(text(f"DROP ROLE IF EXISTS {role}"))
        admin.dispose()


def test_cli_lines_and_errors_mask_the_password(secret_url, tmp_path, smoke_file):
    url, password = secret_url
    shown = []
    for args in (["db", "upgrade", "--db", url], ["ingest", str(smoke_file), "--db", url],
                 ["gate", "--baseline", "no-such-ref", "--candidate", "no-such-ref", "--db", url],
                 ["ingest", str(smoke_file), "--db", url.replace("@", "@127.0.0.1:1/x#", 1)],  # malformed
                 ["ingest", str(smoke_file), "--db", url.replace(":5432/", ":1/")]):  # nothing listens
        p = kwatch(*args, timeout=300)
        out = p.stdout + p.stderr
        assert password not in out, (args, out[-2000:])
        shown.append(out)
    assert mask_url(url) in shown[0] and mask_url(url) in shown[1]  # the URL is still named, masked
    assert "neither a file nor a run id" in shown[2] and mask_url(url) in shown[2]
    assert shown[3].startswith("error:")  # one line, and (above) no password in it
    assert "Connection refused" in shown[4] and len(shown[4].splitlines()) == 1  # one line, no traceback


def test_dashboard_start_line_sidebar_and_notes_mask_the_password(secret_url, tmp_path, request):
    """`kwatch dashboard` on the empty database: the start-up line, the sidebar and the page's
    'No runs in ...' note name the database without its password (real Chromium)."""
    from tests.test_dashboard_browser import CHROMEDRIVER, CHROMIUM, serve, wait_rendered

    if not (CHROMIUM and CHROMEDRIVER):
        pytest.skip("Chromium or chromedriver not installed")
    from selenium.webdriver.common.by import By

    url, password = secret_url
    drv = request.getfixturevalue("driver")
    assert kwatch("db", "upgrade", "--db", url).returncode == 0  # the dashboard opens only a KernelWatch database
    with serve(url, tmp_path) as base:
        drv.get(f"{base}/")
        wait_rendered(drv, 0)
        sidebar = drv.find_element(By.CSS_SELECTOR, '[data-testid="stSidebar"]').text
        note = drv.find_element(By.CSS_SELECTOR, '[data-testid="stAlert"]').text
        assert mask_url(url) in sidebar.replace("\n", ""), sidebar
        assert "***" in note and password not in note, note
        assert password not in drv.page_source
    log = (tmp_path / "streamlit.log").read_text()
    assert "reading " + mask_url(url) in log and password not in log, log
