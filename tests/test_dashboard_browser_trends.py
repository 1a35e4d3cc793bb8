"""Trends and Compare in a real headless Chromium on committed H200 runs (the exp_approx history under three
protocols, the layout-v2 nightly in three files and the commit before it): what the user sees is one line
per protocol, one point per commit, a link that reproduces the view, every run of two commits compared,
and the protocol change named. Screenshots go to $KWATCH_SCREENSHOTS (docs/screenshots refreshes them)."""
from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.test_dashboard_browser import CHROMEDRIVER, CHROMIUM, PLOTLY, serve, wait_rendered
from tests.test_dashboard_browser import driver  # noqa: F401  (the shared headless Chromium)
from tests.test_dashboard_browser_links import query, wait_for
from tests.test_dashboard_compare import BASE_FILES, CAND_FILES, V2_FILE
from tests.test_dashboard_pages import ingest
from tests.test_dashboard_trends import FILES as TREND_FILES

pytestmark = pytest.mark.skipif(not (CHROMIUM and CHROMEDRIVER), reason="Chromium or chromedriver not installed")
MUFU = "technique=exp_approx&impl=triton_mufu&case=elem_n16m&metric=latency_ms"


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    from db.validate import load_and_validate

    d = tmp_path_factory.mktemp("browser_trends")
    url = f"sqlite:///{d / 'kw.db'}"
    paths = list(dict.fromkeys([str(p) for p in TREND_FILES + BASE_FILES + CAND_FILES + [V2_FILE]]))
    ingest(url, [(p, load_and_validate(p)) for p in paths])
    with serve(url, d) as base:
        yield base


def shots() -> Path:
    out = Path(os.environ.get("KWATCH_SCREENSHOTS") or ROOT / ".pytest_cache" / "screenshots")
    out.mkdir(parents=True, exist_ok=True)
    return out


def show_chart(drv) -> None:
    """Scroll the page's chart to the middle of the window (before a screenshot)."""
    from selenium.webdriver.common.by import By

    drv.execute_script("arguments[0].scrollIntoView({block: 'center'});", drv.find_element(By.CSS_SELECTOR, PLOTLY))
    time.sleep(1.0)


def legend(drv) -> list[str]:
    from selenium.webdriver.common.by import By

    return [e.text for e in drv.find_elements(By.CSS_SELECTOR, f"{PLOTLY} .legendtext")]


def texts(drv, testid: str) -> list[str]:
    from selenium.webdriver.common.by import By

    return [e.text for e in drv.find_elements(By.CSS_SELECTOR, f'[data-testid="{testid}"]')]


def test_trends_lines_per_protocol_and_commits_collapsed(site, driver):
    from selenium.webdriver.common.by import By

    driver.get(f"{site}/trends?{MUFU}&x=commit")
    wait_rendered(driver, 1)
    names = wait_for(lambda: legend(driver))
    assert sorted(n.rsplit(" · ", 1)[-1] for n in names) == ["graph/v1", "graph/v2", "graph/v3"], names
    ticks = [e.text for e in driver.find_elements(By.CSS_SELECTOR, f"{PLOTLY} .xtick text")]
    assert ticks and len(ticks) == len(set(ticks))  # one tick per commit, repeats collapsed
    title = driver.find_element(By.CSS_SELECTOR, f"{PLOTLY} .ytitle").text
    assert title == "latency_ms"
    show_chart(driver)
    assert driver.save_screenshot(str(shots() / "trends-protocols.png"))
    # a changed widget rewrites the link; the link opens the same view
    option = [e for e in driver.find_elements(By.CSS_SELECTOR, '.st-key-trend_x [data-testid="stRadioOption"]')
              if e.text == "run order"][0]
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'});", option)
    time.sleep(0.5)
    option.click()
    wait_for(lambda: query(driver).get("x") == ["order"])
    link = driver.current_url
    driver.get(link)
    wait_rendered(driver, 1)
    checked = driver.find_element(By.CSS_SELECTOR, '.st-key-trend_x label[data-selected="true"]')
    assert checked.text == "run order"
    assert driver.find_element(By.CSS_SELECTOR, f"{PLOTLY} .xtitle").text == "run order"


def test_trends_cleared_filter_caps_and_says_so(site, driver):
    driver.get(f"{site}/trends?technique=exp_approx&impl=&case=elem_n16m&metric=latency_ms")
    wait_rendered(driver, 1)
    notes = wait_for(lambda: [t for t in texts(driver, "stAlert") if "lines (implementation" in t])
    assert "showing the 8" in notes[0]
    names = legend(driver)
    assert len(names) == 8 and len({n.split(" · ")[0] for n in names}) == 8


def test_compare_commits_in_the_browser(site, driver):
    from selenium.webdriver.common.by import By

    driver.get(f"{site}/compare?by=commit&baseline=ed9c4f3&candidate=68b2fdc")
    wait_rendered(driver, 1)
    q = query(driver)
    assert q["by"] == ["commit"] and q["candidate"][0].startswith("68b2fdc") and len(q["candidate"][0]) == 40
    caption = wait_for(lambda: [t for t in texts(driver, "stCaptionContainer") if t.startswith("Chart:")])
    metrics = {e.find_element(By.CSS_SELECTOR, '[data-testid="stMetricLabel"]').text:
               e.find_element(By.CSS_SELECTOR, '[data-testid="stMetricValue"]').text
               for e in driver.find_elements(By.CSS_SELECTOR, '[data-testid="stMetric"]')}
    assert int(metrics["stable"]) > 300
    # the chart holds the series judged changed, and no stable one (it once held 60, most of them stable)
    changed = sum(int(v) for k, v in metrics.items() if k.startswith(("regressed", "improved")))
    # (with the shipped spreads these v3 -> layout_v2 runs may have none judged changed: "series 0–0 of 0")
    m = re.search(r"series (\d+)–(\d+) of (\d+) with a change", caption[0])
    assert m and int(m.group(1)) == min(changed, 1), (caption[0], metrics)
    assert int(m.group(2)) == min(changed, 60) and int(m.group(3)) == changed, (caption[0], metrics)
    bars = driver.find_elements(By.CSS_SELECTOR, f"{PLOTLY} .bars .point")
    assert len(bars) == min(changed, 60)
    show_chart(driver)
    assert driver.save_screenshot(str(shots() / "compare-commits.png"))


def test_compare_names_the_protocol_change(site, driver):
    from db.ingest import load_any

    base_id, cand_id = (load_any(str(p))[0]["run"]["id"] for p in (V2_FILE, BASE_FILES[2]))
    driver.get(f"{site}/compare?baseline={base_id}&candidate={cand_id}")
    wait_rendered(driver, 1)
    notes = wait_for(lambda: [t for t in texts(driver, "stAlert") if "no baseline under their timing protocol" in t])
    assert any("graph/v2" in n and "graph/v3" in n for n in notes)


def test_click_a_point_to_compare_with_the_run_before(site, driver):
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By

    driver.get(f"{site}/trends?{MUFU}&x=order")
    wait_rendered(driver, 1)
    show_chart(driver)
    points = driver.find_elements(By.CSS_SELECTOR, f"{PLOTLY} .scatterlayer .trace .points path")
    assert len(points) > 10
    ActionChains(driver).move_to_element(points[len(points) // 2]).click().perform()
    link = wait_for(lambda: [a for a in driver.find_elements(By.CSS_SELECTOR, '[data-testid="stPageLink"] a')
                             if "against the one before it" in a.text])
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'}); arguments[0].click();", link[0])
    wait_for(lambda: "/compare" in driver.current_url)
    wait_rendered(driver, 1)
    q = query(driver)
    assert q["baseline"] != q["candidate"] and len(q["candidate"][0]) == 32
