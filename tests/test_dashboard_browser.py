"""The dashboard in a real headless Chromium (Debian's chromium + chromedriver, driven by selenium):
`kwatch dashboard` serves a database loaded with the committed results and the CPU smoke run; every
page must render its main Plotly chart without an exception. Screenshots go to $KWATCH_SCREENSHOTS
(default: the test's tmp dir)."""
from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.test_dashboard_pages import committed_results, ingest, slower_copy

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")
FLAGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-dev-shm-usage",
         "--window-size=1500,1100"]
# page -> url path (Health is the app's root; its smoke tier holds the planted regression)
PAGES = {"health": "?tier=smoke",
         "trends": "trends?technique=gemm_fp32_emulation&impl=cublas_fp32,cublas_tf32&case=m8192n8192k8192"
                   "&metric=tflops",
         "compare": "compare", "runs": "runs?tier=nightly", "numerics": "numerics",
         "retrieval": "retrieval", "claims": "claims", "cost-model": "cost-model"}
# pages whose chart needs results of these techniques (absent: the page must say there are none)
NEEDS = {"numerics": ("gemm_fp32_emulation_sweep", "exp_approx"), "retrieval": ("needle_retrieval", "mqar")}
PLOTLY = '[data-testid="stPlotlyChart"] .js-plotly-plot'

pytestmark = pytest.mark.skipif(not (CHROMIUM and CHROMEDRIVER),
                                reason="Chromium or chromedriver not installed (apt-get install chromium "
                                       "chromium-driver): the browser test cannot run")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def serve(url: str, d: Path, *extra: str):
    """`kwatch dashboard` over `url` (and `extra` options) on a free localhost port; yields the base URL."""
    port = free_port()
    log = open(d / "streamlit.log", "w")
    proc = subprocess.Popen([sys.executable, "-c", "from ci.cli import main; main()", "dashboard", "--db", url,
                             "--port", str(port), "--address", "127.0.0.1", *extra], cwd=ROOT, stdout=log,
                            stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(120):
            try:
                if urllib.request.urlopen(f"{base}/_stcore/health", timeout=2).read() == b"ok":
                    break
            except OSError:
                time.sleep(0.5)
            assert proc.poll() is None, (d / "streamlit.log").read_text()
        else:
            pytest.fail("the dashboard did not answer /_stcore/health in 60 s")
        yield base
    finally:
        proc.terminate()
        proc.wait(timeout=20)
        log.close()


@pytest.fixture(scope="module")
def server(tmp_path_factory, smoke_file):
    """The dashboard over the committed results and the CPU smoke run; yields (base URL, techniques)."""
    from db.queries import catalog
    from db.validate import load_and_validate

    d = tmp_path_factory.mktemp("browser")
    url = f"sqlite:///{d / 'kw.db'}"
    smoke = load_and_validate(str(smoke_file))
    ingest(url, [(str(p), load_and_validate(str(p))) for p in committed_results()]
           + [("smoke", smoke), ("smoke-slower", slower_copy(smoke))])
    with serve(url, d) as base:
        yield base, set(catalog(url)["technique"])


@pytest.fixture(scope="module")
def driver():
    selenium = pytest.importorskip("selenium", reason="selenium is not installed (pip install selenium)")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for f in FLAGS:
        opts.add_argument(f)
    drv = webdriver.Chrome(service=Service(CHROMEDRIVER), options=opts)
    drv.set_page_load_timeout(60)
    assert selenium.__version__
    yield drv
    drv.quit()


def wait_rendered(drv, want_charts: int, timeout: float = 60.0) -> float:
    """Wait until the script finished (no running indicator) and `want_charts` charts are drawn."""
    from selenium.webdriver.common.by import By

    t0 = time.perf_counter()
    while time.perf_counter() - t0 < timeout:
        running = drv.find_elements(By.CSS_SELECTOR, '[data-testid="stStatusWidget"]')
        loading = drv.find_elements(By.CSS_SELECTOR, '[data-testid="stSkeleton"]')
        charts = drv.find_elements(By.CSS_SELECTOR, PLOTLY)
        headers = drv.find_elements(By.CSS_SELECTOR, '[data-testid="stHeading"]')
        if headers and not running and not loading and len(charts) >= want_charts:
            return time.perf_counter() - t0
        time.sleep(0.2)
    pytest.fail(f"page did not render {want_charts} chart(s) in {timeout} s")


@pytest.mark.parametrize("page", list(PAGES))
def test_page_renders_in_chromium(page, server, driver):
    from selenium.webdriver.common.by import By

    base, techniques = server
    want = 1 if not set(NEEDS.get(page, ())) or set(NEEDS[page]) & techniques else 0
    driver.get(f"{base}/{PAGES[page]}")
    took = wait_rendered(driver, want)
    time.sleep(1.0)  # let Plotly finish drawing before the screenshot
    errors = driver.find_elements(By.CSS_SELECTOR, '[data-testid="stException"]')
    assert not errors, errors[0].text
    assert "Page not found" not in driver.page_source
    if want:
        svg = driver.find_elements(By.CSS_SELECTOR, f"{PLOTLY} svg.main-svg")
        assert svg, "the Plotly chart has no drawn SVG"
    else:
        assert "No " in driver.find_element(By.CSS_SELECTOR, '[data-testid="stAlert"]').text
    out = Path(os.environ.get("KWATCH_SCREENSHOTS") or ROOT / ".pytest_cache" / "screenshots")
    out.mkdir(parents=True, exist_ok=True)
    assert driver.save_screenshot(str(out / f"{page}.png"))
    print(f"{page}: rendered in {took:.2f} s")


def test_mqar_recall_beside_the_loss_in_chromium(server, driver):
    """The Retrieval page's MQAR section draws recall and the non-query loss side by side."""
    from selenium.webdriver.common.by import By

    base, techniques = server
    assert "mqar" in techniques
    driver.get(f"{base}/retrieval")
    wait_rendered(driver, 2)
    t0 = time.perf_counter()
    charts = {}
    while time.perf_counter() - t0 < 60 and len(charts) < 2:
        charts = {k: driver.find_elements(By.CSS_SELECTOR, f".st-key-{k} .js-plotly-plot")
                  for k in ("ret_mqar_chart", "ret_mqar_loss_chart")}
        charts = {k: v[0] for k, v in charts.items() if v}
        time.sleep(0.3)
    assert set(charts) == {"ret_mqar_chart", "ret_mqar_loss_chart"}
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'});", charts["ret_mqar_chart"])
    time.sleep(1.0)
    for el in charts.values():
        traces = driver.execute_script("return arguments[0].data.map(t => t.name);", el)
        # dense, the six selectors, and the run's dense-only control model
        assert set(traces) == {"dense", "dense_control", "exact_topk", "mean_pool", "max_pool", "msa_index",
                               "dhsa_chunks", "zeta_morton"}, str(traces)
    # The trained-lengths band and its label sit inside the data's range (log axis: range in log10 units).
    lo, hi = driver.execute_script("return arguments[0]._fullLayout.xaxis.range;", charts["ret_mqar_chart"])
    assert 1.5 < lo < 2.5 and 3.5 < hi < 4.0, (lo, hi)  # contexts 256..4096 and the band 256..1024
    title = driver.execute_script("return arguments[0].layout.yaxis.title.text;", charts["ret_mqar_loss_chart"])
    assert "nonquery_loss_nats" in title
    out = Path(os.environ.get("KWATCH_SCREENSHOTS") or ROOT / ".pytest_cache" / "screenshots")
    out.mkdir(parents=True, exist_ok=True)
    assert driver.save_screenshot(str(out / "retrieval-mqar.png"))


def test_noisy_series_warning_in_chromium(tmp_path, driver):
    """Trends over 10 real repeated H200 runs: the launch-bound int8 Ozaki series is called too noisy."""
    from selenium.webdriver.common.by import By

    from db.validate import load_and_validate

    url = f"sqlite:///{tmp_path / 'kw.db'}"
    runs = sorted((ROOT / "results/h200/repeats").glob("rep_*.json.gz"))[:10]
    ingest(url, [(str(p), load_and_validate(str(p))) for p in runs])
    with serve(url, tmp_path) as base:
        driver.get(f"{base}/trends?technique=gemm_fp64_ozaki&impl=cublas_int8_ozaki_s8&case=m256n256k256"
                   "&metric=latency_ms")
        wait_rendered(driver, 1)
        found = [e for e in driver.find_elements(By.CSS_SELECTOR, '[data-testid="stAlert"]')
                 if "too much night to night for a 5 % change" in e.text]
        assert found, [e.text for e in driver.find_elements(By.CSS_SELECTOR, '[data-testid="stAlert"]')]
        driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", found[0])
        time.sleep(0.5)
        assert not driver.find_elements(By.CSS_SELECTOR, '[data-testid="stException"]')
        out = Path(os.environ.get("KWATCH_SCREENSHOTS") or ROOT / ".pytest_cache" / "screenshots")
        out.mkdir(parents=True, exist_ok=True)
        assert driver.save_screenshot(str(out / "trends-noisy.png"))


def test_backfilled_history_on_trends_in_chromium(tmp_path, driver):
    """Trends over the committed backfill (one run per commit, at the commit's date): one line per kernel version."""
    from selenium.webdriver.common.by import By

    from db.validate import load_and_validate

    files = sorted((ROOT / "results/h200/history").glob("backfill_*.json.gz")) or \
        sorted((ROOT / "results/cpu/history").glob("backfill_*.json.gz"))
    docs = [load_and_validate(str(p)) for p in files]
    rows = [r for d in docs for r in d["results"]
            if r["impl"] == "triton_bf16x9" and r["metric"] == "latency_ms" and r["status"] == "ok"]
    case, hashes = rows[0]["case"], {r["impl_hash"][:7] for r in rows if r["case"] == rows[0]["case"]}
    assert len(hashes) >= 2  # the kernel changed between the backfilled commits
    url = f"sqlite:///{tmp_path / 'kw.db'}"
    ingest(url, list(zip(map(str, files), docs)))
    from db import queries

    cat = queries.catalog(url)  # ingest re-keys old runs' hashes (with the Impl's args): the stored ones are shown
    ids = cat[(cat["impl"] == "triton_bf16x9") & (cat["case_id"] == case)]["benchmark_id"]
    stored = queries.series_points(url, tuple(int(i) for i in ids), "latency_ms")
    hashes = {h[:7] for h in stored[stored["status"] == "ok"]["impl_hash"]}
    assert len(hashes) >= 2
    with serve(url, tmp_path) as base:
        driver.get(f"{base}/trends?technique=gemm_fp32_emulation&impl=triton_bf16x9&case={case}"
                   "&metric=latency_ms&group=impl%20%C2%B7%20hardware%20%C2%B7%20kernel%20version")
        wait_rendered(driver, 1)
        time.sleep(1.0)
        assert not driver.find_elements(By.CSS_SELECTOR, '[data-testid="stException"]')
        legend = " ".join(e.text for e in driver.find_elements(By.CSS_SELECTOR, ".legendtext"))
        assert all(h in legend for h in hashes), (hashes, legend)
        out = Path(os.environ.get("KWATCH_SCREENSHOTS") or ROOT / ".pytest_cache" / "screenshots")
        out.mkdir(parents=True, exist_ok=True)
        assert driver.save_screenshot(str(out / "trends-history.png"))


def test_runs_page_draws_the_nightly_budget_in_chromium(tmp_path, driver):
    """Runs over two committed H200 nightlies: both points and the dashed 10-minute budget line drawn."""
    from selenium.webdriver.common.by import By

    from db.validate import load_and_validate

    url = f"sqlite:///{tmp_path / 'kw.db'}"
    files = [ROOT / "results/h200" / f for f in ("gemm_fp32_emulation_ws_8192.json",
                                                 "gemm_fp32_emulation_ws_8192_b.json")]
    ingest(url, [(str(p), load_and_validate(str(p))) for p in files])
    with serve(url, tmp_path) as base:
        driver.get(f"{base}/runs?tier=nightly")
        wait_rendered(driver, 1)
        time.sleep(1.0)
        chart = driver.find_element(By.CSS_SELECTOR, PLOTLY)
        points = driver.execute_script("return arguments[0].querySelectorAll('.scatterlayer .point').length;", chart)
        assert points == 2
        budget = driver.execute_script(
            "return [...arguments[0].querySelectorAll('.annotation-text')].map(e => e.textContent);", chart)
        assert "nightly budget on one GPU: 10 min" in budget
        assert driver.execute_script("return arguments[0].querySelectorAll('.shapelayer path').length;", chart) >= 1
        assert "Compare with the run before" in driver.page_source
        assert not driver.find_elements(By.CSS_SELECTOR, '[data-testid="stException"]')
        out = Path(os.environ.get("KWATCH_SCREENSHOTS") or ROOT / ".pytest_cache" / "screenshots")
        out.mkdir(parents=True, exist_ok=True)
        assert driver.save_screenshot(str(out / "runs-budget.png"))
