"""Headless Chromium over two committed H200 nightlies and the same run on a second GPU
(tests/hardware_fixtures.py): the Hardware page, Compare's default and its view across GPUs, its
"with a change" count, and Health's first run on a GPU with one series per kernel."""
from __future__ import annotations

import gzip
import json
import re
import time
from urllib.parse import parse_qs, urlparse

import pytest

from tests.conftest import ROOT
from tests.hardware_fixtures import H100, as_h100, h200_doc
from tests.test_dashboard_browser import CHROMEDRIVER, CHROMIUM, serve, wait_rendered
from tests.test_dashboard_browser import driver  # noqa: F401  (the shared headless Chromium)
from tests.test_dashboard_pages import ingest

pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(not (CHROMIUM and CHROMEDRIVER), reason="Chromium or chromedriver not installed")]
OTHER_H200 = ROOT / "results" / "h200" / "nightly_v4_905ed2f.json.gz"


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """(base URL, database URL, {name: run id}) of the dashboard over the three runs."""
    d = tmp_path_factory.mktemp("hwbrowser")
    url = f"sqlite:///{d / 'kw.db'}"
    h200 = h200_doc()
    with gzip.open(OTHER_H200, "rt") as f:
        other = json.load(f)
    h100 = as_h100(h200)
    ingest(url, [("h200", h200), ("h200b", other), ("h100", h100)])
    ids = {"h200": h200["run"]["id"], "h200b": other["run"]["id"], "h100": h100["run"]["id"]}
    with serve(url, d) as base:
        yield base, url, ids


def page_text(drv, base: str, path: str, charts: int = 0, timeout: float = 120.0) -> str:
    """The main section's text once the script has finished and the text has held still for 1.5 s (the
    running indicator can come up after the first widgets are drawn, so no indicator alone is not done)."""
    from selenium.webdriver.common.by import By

    drv.get(f"{base}/{path}")
    wait_rendered(drv, charts, timeout=timeout)
    main = lambda: drv.find_element(By.CSS_SELECTOR, "section.main, [data-testid='stMain']").text  # noqa: E731
    t0, last, since = time.perf_counter(), main(), time.perf_counter()
    while time.perf_counter() - t0 < timeout and time.perf_counter() - since < 1.5:
        time.sleep(0.25)
        now = main()
        if now != last or drv.find_elements(By.CSS_SELECTOR, '[data-testid="stStatusWidget"]'):
            last, since = now, time.perf_counter()
    return last


def metrics(drv) -> dict[str, str]:
    from selenium.webdriver.common.by import By

    out = {}
    for m in drv.find_elements(By.CSS_SELECTOR, '[data-testid="stMetric"]'):
        label = m.find_element(By.CSS_SELECTOR, '[data-testid="stMetricLabel"]').text
        out[label] = m.find_element(By.CSS_SELECTOR, '[data-testid="stMetricValue"]').text
    return out


def test_hardware_page_alerts_on_the_needle_loss(site, driver):  # noqa: F811
    base, _, _ = site
    text = page_text(driver, base, f"hardware?gpu_a={H100}&gpu_b=NVIDIA H200")
    assert "2 quality series differ between the GPUs" in text, text[:3000]
    assert "triton_zeta_morton" in text and "0/33" in text, text[text.find("Quality"):text.find("Quality") + 800]
    assert "Speed: B over A against the ceilings' prediction" in text
    assert re.search(r"\d+ of \d+ series move against the prediction", text)
    assert "Traceback" not in text and "Error" not in text.replace("error", "")


def test_compare_default_is_two_different_runs(site, driver):  # noqa: F811
    base, _, _ = site
    page_text(driver, base, "compare")
    q = parse_qs(urlparse(driver.current_url).query)
    assert q["baseline"] != q["candidate"], driver.current_url


def test_compare_across_gpus_is_a_descriptive_table(site, driver):  # noqa: F811
    base, _, ids = site
    text = page_text(driver, base, f"compare?baseline={ids['h100']}&candidate={ids['h200']}")
    assert "described side by side here, not judged" in text
    assert not metrics(driver)  # no verdict tiles: no "regressed" count across GPUs
    assert "regressed" not in text.lower().replace("no regressions", "")


def test_compare_counts_only_series_judged_changed(site, driver):  # noqa: F811
    base, _, ids = site
    text = page_text(driver, base, f"compare?baseline={ids['h200']}&candidate={ids['h200b']}", charts=1)
    n = int(re.search(r"of (\d+) with a change", text).group(1))
    tiles = metrics(driver)
    assert n == sum(int(v) for k, v in tiles.items() if k.startswith(("regressed", "improved")))
    assert int(tiles["stable"]) > n  # stable series have a relative change too and are not counted


def test_health_first_run_on_a_gpu_and_one_series_per_kernel(site, driver):  # noqa: F811
    from dashboard.health import health
    from db.queries import runs
    from db.verdict import metric_kind

    base, url, _ = site
    text = page_text(driver, base, "?tier=nightly", charts=1)
    assert f"{H100}: first run on this GPU" in text, text[:3000]
    _, series = health(url, runs(url), "nightly")
    h100 = series[series["hardware"] == H100]
    assert len(h100) and not (h100["label"] == "missing baseline").any()
    kinds = {}
    for r in series.itertuples():
        kinds.setdefault((r.hardware, r.technique, r.impl, r.case_id, r.protocol), set()).add(metric_kind(r.metric, r.unit))
    assert not [k for k, v in kinds.items() if {"timing", "throughput"} <= v]  # latency and its rate: one series
    assert f"all {len(series)} series" in text


def test_hardware_page_on_the_real_h100_and_h200_nightlies(tmp_path, driver):  # noqa: F811
    """The page over data nobody shaped for it: the H100 nightly of 1661801 (results/h100) beside the H200
    nightly dce11dc; its screenshot is README's (docs/screenshots/hardware.png with KWATCH_SCREENSHOTS)."""
    import os
    from pathlib import Path

    url = f"sqlite:///{tmp_path / 'kw.db'}"
    docs = []
    for name, path in (("h100", ROOT / "results/h100/nightly_v4_1661801.json.gz"),
                       ("h200", ROOT / "results/h200/nightly_v4_dce11dc.json.gz")):
        with gzip.open(path, "rt") as f:
            docs.append((name, json.load(f)))
    ingest(url, docs)
    with serve(url, tmp_path) as base:
        text = page_text(driver, base, f"hardware?gpu_a={H100}&gpu_b=NVIDIA H200", timeout=180)
        assert "Traceback" not in text
        assert re.search(r"No quality difference: \d+ quality series agree|\d+ quality series differ", text), text[:2000]
        m = re.search(r"(\d+) of (\d+) series move against the prediction", text)
        assert m and int(m.group(2)) > 300, text[:2000]
        out = Path(os.environ.get("KWATCH_SCREENSHOTS") or ROOT / ".pytest_cache" / "screenshots")
        out.mkdir(parents=True, exist_ok=True)
        driver.set_window_size(1400, 1800)
        assert driver.save_screenshot(str(out / "hardware.png"))
