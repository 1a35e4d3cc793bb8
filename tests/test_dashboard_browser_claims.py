"""Claims, Runs, Cost model and Alerts in a real headless Chromium at a 1280 px window, over committed result
files: an H200 nightly (and the H100 nightlies under results/h100), the two stored cost-model runs, and the CPU
smoke pair with planted change points. Claims names the GPU of each row and reads a claim whole inside the
window; Runs counts expected failures and probe points apart from failed correctness; the cost-model bars are
one per workload and GPU however many runs are stored. Screenshots (alerts.png, runs.png, claims.png) go to
$KWATCH_SCREENSHOTS (default .pytest_cache/screenshots); docs/screenshots/ holds the committed ones."""
from __future__ import annotations

import glob
import os
import time
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.test_dashboard_alerts import plant
from tests.test_dashboard_browser import CHROMEDRIVER, CHROMIUM, driver, serve, wait_rendered  # noqa: F401
from tests.test_dashboard_pages import ingest

pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(not (CHROMIUM and CHROMEDRIVER), reason="Chromium or chromedriver not installed "
                                 "(apt-get install chromium chromium-driver)")]

H200_NIGHTLY = "results/h200/nightly_v4_dce11dc.json.gz"  # 8,773 rows: 782 probe points, 118 expected failures
COST = ["results/h200/attn_cost_model.json.gz", "results/h200/attn_cost_model_57fc1cd.json.gz"]  # two stored runs


def h100_nightlies() -> list[str]:
    return sorted(os.path.relpath(p, ROOT) for p in glob.glob(str(ROOT / "results" / "h100" / "nightly*.json.gz")))


def shots() -> Path:
    out = Path(os.environ.get("KWATCH_SCREENSHOTS") or ROOT / ".pytest_cache" / "screenshots")
    out.mkdir(parents=True, exist_ok=True)
    return out


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The dashboard over those files; yields (base URL, database URL)."""
    from db.validate import load_and_validate

    d = tmp_path_factory.mktemp("browser_claims")
    url = f"sqlite:///{d / 'kw.db'}"
    plant(url)  # the CPU smoke pair, with change points for Alerts
    ingest(url, [(f, load_and_validate(str(ROOT / f))) for f in [H200_NIGHTLY, *h100_nightlies(), *COST]])
    with serve(url, d) as base:
        yield base, url


def at_1280(drv, address: str, charts: int = 1) -> None:
    drv.set_window_size(1280, 1000)
    drv.get(address)
    wait_rendered(drv, charts)
    time.sleep(1.0)  # let Plotly and the data grid finish drawing


def no_exception(drv) -> None:
    from selenium.webdriver.common.by import By

    assert not drv.find_elements(By.CSS_SELECTOR, '[data-testid="stException"]')


def test_claims_name_the_gpu_and_read_whole_at_1280(site, driver):  # noqa: F811
    """Rows per GPU: the H200 filter keeps H200 rows; the selected claim reads whole inside the window,
    its status naming the GPU it was measured on, and a confounded claim says by what."""
    from selenium.webdriver.common.by import By

    base, _ = site
    at_1280(driver, f"{base}/claims?gpu=H200&status=confounded", charts=1)
    no_exception(driver)
    assert "not read by this page" not in driver.find_element(By.TAG_NAME, "body").text  # ?gpu= is the page's
    whole = driver.find_element(By.XPATH, "//*[@data-testid='stHeading'][.//*[contains(., 'The claim, whole')]]"
                                          "/following::*[@data-testid='stMarkdownContainer'][1]")
    text = whole.text
    assert "status on H200: confounded" in text and "confounded:" in text, text
    assert "on the H100" not in text  # an H200 row never speaks of another GPU's figure
    inside = driver.execute_script(
        "const r = arguments[0].getBoundingClientRect();"
        "return [r.right <= window.innerWidth, arguments[0].scrollWidth <= arguments[0].clientWidth + 1];", whole)
    assert inside == [True, True]
    grid = driver.find_element(By.CSS_SELECTOR, '[data-testid="stDataFrame"]')
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'});", grid)  # the table and the claim read whole
    time.sleep(0.5)
    driver.save_screenshot(str(shots() / "claims.png"))


def test_runs_counts_expected_failures_and_probe_points_apart(site, driver):  # noqa: F811
    """The H200 nightly's 118 expected failures and 782 probe points are not 'failed correctness'."""
    from db.queries import runs

    base, url = site
    r = runs(url)
    hw = r[r["gpu_name"] == "NVIDIA H200"]["hardware_key"].iloc[0]
    at_1280(driver, f"{base}/runs?tier=nightly&hw={hw}")
    no_exception(driver)
    body = driver.find_element("tag name", "body").text
    assert "0 failed correctness" in body and "118 expected failures and 782 probe points" in body, body[-2000:]
    at_1280(driver, f"{base}/runs?tier=nightly")  # every GPU's nightlies, for the screenshot
    no_exception(driver)
    driver.save_screenshot(str(shots() / "runs.png"))


def test_cost_model_bars_once_per_workload_and_gpu(site, driver):  # noqa: F811
    """Two stored runs of the cost model: each bar trace draws each workload once (the newest run's)."""
    base, _ = site
    at_1280(driver, f"{base}/cost-model", charts=2)
    no_exception(driver)
    bars = driver.execute_script(
        "return [...document.querySelectorAll('.js-plotly-plot')].flatMap(g => g.data)"
        ".filter(t => t.type === 'bar').map(t => [t.name, Array.from(t.x)]);")
    measured = [(n, x) for n, x in bars if n.startswith("measured on")]
    assert measured and all(len(x) == len(set(x)) == 4 for _, x in measured), bars
    assert [n for n, _ in measured] == ["measured on NVIDIA H200: share of attention time"]


def test_alerts_screenshot(site, driver):  # noqa: F811
    """Alerts over the planted change points renders and is photographed for the README."""
    from selenium.webdriver.common.by import By

    base, _ = site
    driver.set_window_size(1280, 1000)
    driver.get(f"{base}/alerts")
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < 60 and (
            not driver.find_elements(By.CSS_SELECTOR, '[data-testid="stHeading"]')
            or driver.find_elements(By.CSS_SELECTOR, '[data-testid="stStatusWidget"]')):
        time.sleep(0.2)
    time.sleep(1.0)
    no_exception(driver)
    assert "Alerts" in driver.find_element("tag name", "body").text
    driver.save_screenshot(str(shots() / "alerts.png"))
