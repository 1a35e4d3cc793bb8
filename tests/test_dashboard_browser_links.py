"""Links and alerts in a real headless Chromium, on a database of every committed result file (`.json`
and `.json.gz`) with the change points `kwatch detect` finds in it: a link sets the page's widgets, a
changed widget rewrites the address bar, a bad value gives a visible warning, and an alert acknowledged
from the Alerts page (behind the sign-in proxy's header) is what `kwatch detect` then reports."""
from __future__ import annotations

import glob
import gzip
import json
import os
import time
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest

from tests.conftest import ROOT, kwatch
from tests.test_dashboard_browser import CHROMEDRIVER, CHROMIUM, serve, wait_rendered
from tests.test_dashboard_browser import driver  # noqa: F401  (the shared headless Chromium)
from tests.test_dashboard_pages import ingest

pytestmark = pytest.mark.skipif(not (CHROMIUM and CHROMEDRIVER), reason="Chromium or chromedriver not installed")
HEADER = "X-Forwarded-Email"


def every_result_file() -> list[str]:
    """Every committed result document (schema 1), plain or gzipped."""
    out = []
    for p in sorted(glob.glob(str(ROOT / "results" / "**" / "*.json*"), recursive=True)):
        if p.endswith((".json", ".json.gz")):
            with (gzip.open(p, "rt") if p.endswith(".gz") else open(p)) as f:
                if json.load(f).get("schema") is not None:
                    out.append(p)
    return out


@pytest.fixture(scope="module")
def committed(tmp_path_factory):
    """(database URL, its folder, the change points `kwatch detect` stored) over every committed run."""
    from db.validate import load_and_validate

    d = tmp_path_factory.mktemp("links")
    url = f"sqlite:///{d / 'kw.db'}"
    ingest(url, [(p, load_and_validate(p)) for p in every_result_file()])
    proc = kwatch("detect", "--db", url, "--json", str(d / "detect.json"))
    assert proc.returncode == 0, proc.stderr
    return url, d, json.loads((d / "detect.json").read_text())["changes"]


@pytest.fixture(scope="module")
def site(committed):
    url, d, changes = committed
    with serve(url, d, "--writes-db", url, "--identity-header", HEADER) as base:
        yield base, changes


def query(drv) -> dict:
    return parse_qs(urlparse(drv.current_url).query, keep_blank_values=True)


def wait_for(cond, timeout: float = 30.0, seen=None):
    """cond()'s first truthy value within timeout; on timeout fail, showing seen() where given."""
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < timeout:
        got = cond()
        if got:
            return got
        time.sleep(0.3)
    pytest.fail("timed out" + (f": {seen()}" if seen else ""))


def alerts_text(drv) -> list[str]:
    from selenium.webdriver.common.by import By

    return [e.text for e in drv.find_elements(By.CSS_SELECTOR, '[data-testid="stMarkdownContainer"]')
            if " · run " in e.text and "#" in e.text]


def pick(drv, key: str, option: str) -> None:
    """Choose `option` in the selectbox or multiselect with widget key `key`."""
    from selenium.webdriver.common.by import By

    box = drv.find_element(By.CSS_SELECTOR, f".st-key-{key} .react-aria-ComboBox")
    drv.execute_script("arguments[0].scrollIntoView({block: 'center'});", box)
    opener = box.find_elements(By.CSS_SELECTOR, 'button[aria-label="Open"]') or box.find_elements(By.CSS_SELECTOR, "input")
    opener[0].click()
    opt = wait_for(lambda: [o for o in drv.find_elements(By.CSS_SELECTOR, '[role="option"]') if o.text.strip() == option])
    opt[0].click()


def chips(drv, key: str) -> list[str]:
    """The values shown as chosen in the multiselect with widget key `key`."""
    from selenium.webdriver.common.by import By

    return [t.get_attribute("aria-label") for t in
            drv.find_elements(By.CSS_SELECTOR, f".st-key-{key} .react-aria-ComboBox [data-tag]")]


def test_alerts_permalink_round_trip(site, driver):
    base, changes = site
    assert len(changes) >= 1, "the committed H200 history holds change points"
    driver.get(f"{base}/alerts?age=all&state=new&state=found%20late")
    wait_rendered(driver, 0)
    shown = wait_for(lambda: alerts_text(driver))
    assert len(shown) == len({c["id"] for c in changes if not c["acknowledged"]})
    assert all(("found late" in t or "new" in t) for t in shown)
    q = query(driver)
    assert q["age"] == ["all"] and q["state"] == ["new", "found late"]
    out = Path(os.environ.get("KWATCH_SCREENSHOTS") or ROOT / ".pytest_cache" / "screenshots")
    out.mkdir(parents=True, exist_ok=True)
    assert driver.save_screenshot(str(out / "alerts.png"))
    pick(driver, "alerts_age", "7")
    wait_for(lambda: query(driver).get("age") == ["7"])
    assert query(driver)["state"] == ["new", "found late"]  # the other widgets stay in the link


def test_alerts_link_opens_the_series_on_trends(site, driver):
    from selenium.webdriver.common.by import By

    base, changes = site
    driver.get(f"{base}/alerts?age=all")
    wait_rendered(driver, 0)
    wait_for(lambda: alerts_text(driver))
    link = driver.find_elements(By.CSS_SELECTOR, '[data-testid="stPageLink"] a')
    trends = [a for a in link if "Trends" in a.text][0]
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'}); arguments[0].click();", trends)
    wait_for(lambda: "/trends" in driver.current_url)
    wait_rendered(driver, 1)
    q = query(driver)
    newest = max(changes, key=lambda c: (c["started_at"], c["id"]))
    assert q["technique"] == [newest["technique"]] and q["case"] == [newest["case_id"]], q


def test_bad_link_values_warn_in_the_page(site, driver):
    from selenium.webdriver.common.by import By

    base, _ = site
    for path, bad in (("?tier=bogus", "bogus"), ("alerts?age=5&state=gone", "gone"),
                      ("numerics?metric=ulp", "ulp"), ("claims?status=sure", "sure")):
        driver.get(f"{base}/{path}")
        wait_rendered(driver, 0)
        # Streamlit draws the page's warnings one by one: wait for this value's, not merely the first.
        alerts = lambda: [e.text for e in driver.find_elements(By.CSS_SELECTOR, '[data-testid="stAlert"]')  # noqa: E731
                          if "The link's" in e.text]
        wait_for(lambda: any(bad in a and "showing" in a for a in alerts()), seen=lambda: (path, alerts()))


def test_misspelled_parameter_name_is_named_in_the_page(site, driver):
    from selenium.webdriver.common.by import By

    base, _ = site
    driver.get(f"{base}/trends?technqiue=exp_approx")
    wait_rendered(driver, 0)
    notes = wait_for(lambda: [e.text for e in driver.find_elements(By.CSS_SELECTOR, '[data-testid="stAlert"]')
                              if "not read by this page" in e.text])
    assert len(notes) == 1 and "technqiue" in notes[0] and "did you mean technique?" in notes[0], notes
    assert "case" in notes[0] and "log" in notes[0] and "\n" not in notes[0].strip()  # the known names, one line
    assert "technqiue" not in wait_for(lambda: query(driver) if "technique" in query(driver) else None)


def test_health_numerics_claims_round_trip(site, driver):
    from selenium.webdriver.common.by import By

    base, _ = site
    driver.get(f"{base}/?tier=smoke")
    wait_rendered(driver, 1)
    assert query(driver)["tier"] == ["smoke"]
    pick(driver, "health_tier", "nightly")
    wait_for(lambda: query(driver).get("tier") == ["nightly"])

    driver.get(f"{base}/numerics?metric=rel_err&scheme=triton_bf16x6&scheme=cublas_fp32")
    wait_rendered(driver, 2)
    checked = driver.find_element(By.CSS_SELECTOR, '.st-key-num_metric label[data-selected="true"]')
    assert checked.text == "relative error vs fp64"
    assert sorted(chips(driver, "num_schemes")) == ["cublas_fp32", "triton_bf16x6"]
    label = [e for e in driver.find_elements(By.CSS_SELECTOR, '.st-key-num_metric [data-testid="stRadioOption"]')
             if "fp32 IEEE" in e.text][0]
    label.click()
    wait_for(lambda: query(driver).get("metric") == ["rel_err_vs_fp32"])
    assert sorted(query(driver)["scheme"]) == ["cublas_fp32", "triton_bf16x6"]

    driver.get(f"{base}/claims?status=reproduced")
    wait_rendered(driver, 1)
    assert chips(driver, "claims_status") == ["reproduced"]
    pick(driver, "claims_status", "pending")
    wait_for(lambda: query(driver).get("status") == ["reproduced", "pending"])


def test_ack_from_the_alerts_page_is_seen_by_kwatch_detect(site, committed, driver, tmp_path):
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.common.by import By

    base, changes = site
    url = committed[0]
    target = max((c for c in changes if not c["acknowledged"]), key=lambda c: (c["started_at"], c["id"]))
    driver.execute_cdp_cmd("Network.enable", {})
    driver.execute_cdp_cmd("Network.setExtraHTTPHeaders", {"headers": {HEADER: "alice@example.com"}})
    try:
        driver.get(f"{base}/alerts?age=all")
        wait_rendered(driver, 0)
        form = wait_for(lambda: [f for f in driver.find_elements(By.CSS_SELECTOR, '[data-testid="stForm"]')
                                 if "Acknowledging as alice@example.com" in f.text])
        # the form preselects the newest open alert: the target
        why = form[0].find_element(By.CSS_SELECTOR, '[data-testid="stTextInput"] input')
        driver.execute_script("arguments[0].scrollIntoView({block: 'center'});", why)
        why.send_keys("cuBLAS fp64 at 4096^3 throttles on this host: not a code change", Keys.TAB)
        time.sleep(0.5)
        form[0].find_element(By.CSS_SELECTOR, '[data-testid="stFormSubmitButton"] button').click()
        wait_for(lambda: "Acknowledgement" in driver.find_element(By.CSS_SELECTOR, '[data-testid="stMain"]').text)
    finally:
        driver.execute_cdp_cmd("Network.setExtraHTTPHeaders", {"headers": {}})
    out = tmp_path / "after.json"
    # the target's technique alone (the whole history took two minutes more on a 2-core machine)
    proc = kwatch("detect", "--db", url, "-t", target["technique"], "--json", str(out))
    assert proc.returncode == 0, proc.stderr
    after = json.loads(out.read_text())["changes"]
    acked = [c for c in after if c["id"] == target["id"] and c["acknowledged"]]
    assert acked and acked[0]["acknowledged"]["who"] == "alice@example.com (dashboard)", after


def test_cost_model_and_retrieval_round_trip(site, driver):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    base, _ = site
    driver.get(f"{base}/cost-model?prompt=1000&attended=0.3")
    wait_rendered(driver, 1)
    box = driver.find_element(By.CSS_SELECTOR, ".st-key-cost_prompt input")
    assert box.get_attribute("value") == "1000"
    box.send_keys(Keys.CONTROL, "a")
    box.send_keys("4000", Keys.ENTER)
    wait_for(lambda: query(driver).get("prompt") == ["4000"])
    assert query(driver)["attended"] == ["0.3"]

    driver.get(f"{base}/retrieval")
    wait_rendered(driver, 1)
    link = wait_for(lambda: query(driver) if "mqar_run" in query(driver) else None)
    driver.get(driver.current_url)  # the copied link, opened in a new session
    wait_rendered(driver, 1)
    assert query(driver) == link
    assert not [e for e in driver.find_elements(By.CSS_SELECTOR, '[data-testid="stAlert"]') if "The link's" in e.text]


def test_moving_between_pages_from_the_sidebar_warns_of_nothing(site, driver):
    """The sidebar's page links carry no query string over: Health's `tier` must not be named as a
    misspelled parameter on Compare, nor Compare's on Trends."""
    from selenium.webdriver.common.by import By

    base, _ = site
    driver.get(f"{base}/?tier=nightly")
    wait_rendered(driver, 0)
    for label, path in (("Compare", "/compare"), ("Trends", "/trends"), ("Health", "")):
        link = wait_for(lambda: [a for a in driver.find_elements(By.CSS_SELECTOR, '[data-testid="stSidebarNav"] a')
                                 if a.text.strip() == label])
        link[0].click()
        wait_for(lambda: urlparse(driver.current_url).path.rstrip("/") == path)
        wait_rendered(driver, 0)
        time.sleep(1.0)
        notes = [e.text for e in driver.find_elements(By.CSS_SELECTOR, '[data-testid="stAlert"]')
                 if "not read by this page" in e.text]
        assert not notes, (label, driver.current_url, notes)
