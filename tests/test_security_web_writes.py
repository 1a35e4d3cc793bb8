"""Acknowledging from the web in a real Chromium: off by default; with --writes-db and --identity-header
only for a request that carries the sign-in proxy's header, and recorded with that identity."""
from __future__ import annotations

import time
from datetime import datetime, timezone
from urllib.parse import quote

import pytest
from sqlalchemy import select

from tests.test_dashboard_browser import CHROMEDRIVER, CHROMIUM, serve, wait_rendered
from tests.test_dashboard_browser import driver  # noqa: F401  (the shared headless Chromium)

pytestmark = pytest.mark.skipif(not (CHROMIUM and CHROMEDRIVER), reason="Chromium or chromedriver not installed")
HEADER = "X-Forwarded-Email"


@pytest.fixture
def with_change_point(tmp_path, smoke_file):
    """A SQLite database with the smoke run and one stored change point on a series of it; yields the URL
    and the trends page path of that series."""
    from db.engine import open_db
    from db.ingest import ingest_docs
    from db.models import Run
    from db.models_ci import ChangePoint
    from db.validate import load_and_validate

    url = f"sqlite:///{tmp_path / 'kw.db'}"
    doc = load_and_validate(str(smoke_file))
    factory = open_db(url)
    ingest_docs(factory, [("smoke", doc)])
    row = next(r for r in doc["results"] if r["metric"] == "latency_ms" and r["status"] == "ok")
    with factory() as s, s.begin():
        run = s.get(Run, doc["run"]["id"])
        env = run.environment
        s.add(ChangePoint(technique=row["technique"], impl=row["impl"], case_id=row["case"], metric="latency_ms",
                          hardware_key=env.hardware_key, software_key=env.software_key,
                          protocol=row["stats"].get("protocol", "") or "", run_id=run.id,
                          run_started_at=run.started_at, method="pelt", before_value=1.0, after_value=1.2,
                          rel_change=0.2, kind="regression", detected_at=datetime.now(timezone.utc), details={}))
    path = (f"trends?technique={quote(row['technique'])}&impl={quote(row['impl'])}&case={quote(row['case'])}"
            "&metric=latency_ms")
    return url, path


def _open_expander(drv, base, path):
    from selenium.webdriver.common.by import By

    drv.get(f"{base}/{path}")
    wait_rendered(drv, 1, timeout=180)
    for e in drv.find_elements(By.CSS_SELECTOR, '[data-testid="stExpander"] summary'):
        if "change points and acknowledgements" in e.text:
            drv.execute_script("arguments[0].scrollIntoView({block: 'center'}); arguments[0].click();", e)
            time.sleep(1.0)
            return drv.find_element(By.CSS_SELECTOR, '[data-testid="stMain"]').text
    pytest.fail("no change point expander")


def _acks(url):
    from db.engine import open_db
    from db.models_ci import Acknowledgement

    with open_db(url)() as s:
        return [(a.who, a.why) for a in s.scalars(select(Acknowledgement))]


def test_web_writes_are_off_by_default(with_change_point, tmp_path, driver):
    from selenium.webdriver.common.by import By

    url, path = with_change_point
    with serve(url, tmp_path) as base:
        text = _open_expander(driver, base, path)
        assert "Acknowledging from the web is off" in text
        assert not driver.find_elements(By.CSS_SELECTOR, '[data-testid="stFormSubmitButton"]')
    assert "no web writes" in (tmp_path / "streamlit.log").read_text()


def test_acknowledging_needs_the_proxy_identity_and_records_it(with_change_point, tmp_path, driver):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    url, path = with_change_point
    driver.execute_cdp_cmd("Network.enable", {})
    with serve(url, tmp_path, "--writes-db", url, "--identity-header", HEADER) as base:
        driver.execute_cdp_cmd("Network.setExtraHTTPHeaders", {"headers": {}})
        text = _open_expander(driver, base, path)
        assert "Sign in to acknowledge" in text and HEADER in text
        assert not driver.find_elements(By.CSS_SELECTOR, '[data-testid="stFormSubmitButton"]')

        driver.execute_cdp_cmd("Network.setExtraHTTPHeaders", {"headers": {HEADER: "alice@example.com"}})
        try:
            text = _open_expander(driver, base, path)
            assert "Acknowledging as alice@example.com" in text, text
            why = driver.find_element(By.CSS_SELECTOR, '[data-testid="stForm"] [data-testid="stTextInput"] input')
            why.send_keys("the new kernel trades latency for accuracy", Keys.TAB)  # the value is sent on blur
            time.sleep(0.5)
            driver.find_element(By.CSS_SELECTOR, '[data-testid="stFormSubmitButton"] button').click()
            for _ in range(50):
                if _acks(url):
                    break
                time.sleep(0.2)
        finally:
            driver.execute_cdp_cmd("Network.setExtraHTTPHeaders", {"headers": {}})
    assert _acks(url) == [("alice@example.com (dashboard)", "the new kernel trades latency for accuracy")]
