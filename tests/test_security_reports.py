"""Hostile names (HTML, backticks, pipes, Markdown links, @mentions, very long) in every report: the gate's
Markdown rendered by GitHub's own cmark-gfm and its JSON, the nightly Markdown and HTML (opened in a real
Chromium), and the dashboard's captions, hovers and legends (real Chromium)."""
from __future__ import annotations

import json
import re
import time

import pytest

from db.escape import md_code, md_text, plotly_text
from tests.conftest import ROOT, kwatch, write_docs
from tests.test_dashboard_browser import CHROMEDRIVER, CHROMIUM
from tests.test_dashboard_browser import driver  # noqa: F401  (the shared headless Chromium)
from runners.resultfile import load

cmarkgfm = pytest.importorskip("cmarkgfm", reason="cmarkgfm (GitHub's Markdown renderer) is not installed")

H200 = ROOT / "results/h200/gemm_fp32_emulation_nightly_foundation.json.gz"
PAYLOAD = "document.title='pwned'"
IMPL = f'<img src=x onerror="{PAYLOAD}">|`tick``s`<a href="https://evil.example">a</a>'  # 128 at most
CASE = "[click](https://evil.example/x) @octocat www.evil.example " + "L" * 190  # 256 at most
GPU = "NVIDIA <b>H200</b> [x](javascript:alert(1)) @team"
ERROR = f"<script>{PAYLOAD}</script> | @here `x` [y](http://e.example) & more\nsecond line"
HOSTILE = [IMPL, CASE, GPU, ERROR, "a|b|c", "``", "x" * 400, "@octocat", "![i](https://e.example/p.png)"]


def render(md: str) -> str:
    """HTML the way GitHub renders a comment (cmark-gfm with its extensions; raw HTML would pass)."""
    from cmarkgfm.cmark import Options

    return cmarkgfm.github_flavored_markdown_to_html(md, options=Options.CMARK_OPT_UNSAFE)


def assert_inert(page: str) -> None:
    """No element, link, image or mention (outside code, where GitHub links none) came from a name."""
    assert not re.search(r"<(img|script|a|b)\b", page), re.findall(r"<(?:img|script|a|b)\b[^>]*>", page)[:3]
    text = re.sub(r"<code>.*?</code>", "", page, flags=re.S)
    assert "@octocat" not in text and "@team" not in text and "@here" not in text


@pytest.fixture
def browser(request):
    if not (CHROMIUM and CHROMEDRIVER):
        pytest.skip("Chromium or chromedriver not installed")
    return request.getfixturevalue("driver")


@pytest.mark.parametrize("name", HOSTILE)
def test_a_hostile_name_stays_one_literal_table_cell(name):
    html = render(f"| a | b | c |\n|---|---|---|\n| {md_code(name)} | {md_text(name)} | end |\n")
    assert_inert(html)
    row = html.split("<tbody>")[1]
    assert row.count("<td>") == 3 and "<td>end</td>" in row  # no pipe split the row
    code = re.search(r"<code>(.*?)</code>", row, re.S).group(1)
    shown = " ".join(name.split())
    assert code.strip().replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", '"').replace("&amp;", "&") \
        == (shown if len(shown) <= 120 else shown[:119] + "…")


def test_plotly_text_escapes_markup():
    assert plotly_text('<a href="https://e">x</a>') == '&lt;a href="https://e"&gt;x&lt;/a&gt;'


def hostile_doc(doc: dict) -> dict:
    """The H200 run with one impl and one case renamed to hostile names, a hostile GPU name, and one
    errored result whose message is hostile."""
    doc = json.loads(json.dumps(doc))
    doc["run"]["env"]["gpu_name"] = GPU
    for r in doc["results"]:
        r["impl"] = IMPL if r["impl"] == "cublas_tf32" else r["impl"]
        r["case"] = CASE if r["case"] == "m8192n8192k8192" else r["case"]  # a steady series: it blocks
    return doc


def with_error(doc: dict) -> dict:
    doc = json.loads(json.dumps(doc))
    for r in doc["results"]:
        if r["impl"] == "triton_dot_ieee" and r["case"] == CASE:
            r.update(status="error", error=ERROR, value=None, samples=[], stats={})
    return doc


def slowed(doc: dict, factor: float = 1.10) -> dict:
    doc = json.loads(json.dumps(doc))
    doc["run"]["id"] = doc["run"]["id"][:40] + "-slow"
    for r in doc["results"]:
        if (r["impl"], r["case"], r["metric"]) == (IMPL, CASE, "latency_ms"):
            r["samples"] = [x * factor for x in r["samples"]]
            r["value"] *= factor
    return doc


def test_gate_markdown_and_json_with_hostile_names(tmp_path):
    base = hostile_doc(load(H200))
    [b, c] = write_docs([base, with_error(slowed(base))], tmp_path)
    db = f"sqlite:///{tmp_path / 'kw.db'}"
    assert kwatch("db", "upgrade", "--db", db).returncode == 0
    mute = kwatch("mute", "add", "-t", "gemm_fp32_emulation", "--impl", "triton_dot_tf32", "--who", "@octocat <b>x</b>",
                  "--why", "[pwn](https://e.example) | `t`", "--db", db)
    assert mute.returncode == 0, mute.stdout + mute.stderr
    p = kwatch("gate", "--baseline", b, "--candidate", c, "--markdown", str(tmp_path / "g.md"),
               "--json", str(tmp_path / "g.json"), "--db", db)
    assert p.returncode == 1, p.stdout + p.stderr
    md = (tmp_path / "g.md").read_text()
    html = render(md)
    assert_inert(html)
    assert "### Blocking" in md and "### Muted" in md and "### Where in the shape space" in md
    for table in html.split("<table>")[1:]:  # every row has as many cells as its header
        head = len(re.findall(r"<th[ >]", table.split("</thead>")[0]))
        rows = table.split("<tbody>")[1].split("</tbody>")[0].split("<tr>")[1:]
        assert rows and all(len(re.findall(r"<td[ >]", r)) == head for r in rows), table[:400]
    assert max(len(line) for line in md.splitlines()) < 2000
    report = json.loads((tmp_path / "g.json").read_text())  # JSON keeps the names exactly
    assert {(s["key"]["impl"], s["key"]["case_id"]) for s in report["series"]} >= {(IMPL, CASE)}
    assert f"gemm_fp32_emulation/{IMPL}/{CASE}/latency_ms" in report["blocking"]
    assert any(s["status"] == "errored" for s in report["series"] if s["key"]["impl"] == "triton_dot_ieee")


@pytest.fixture(scope="module")
def nightly_report(tmp_path_factory):
    """`kwatch nightly` over replayed nights of the hostile run, with a step on the hostile series and an
    errored hostile result on the reported night; returns its output folder."""
    from ci.nightly_replay import replay_runs

    d = tmp_path_factory.mktemp("nightly")
    doc = hostile_doc(load(H200))
    nights = replay_runs(doc, nights=12, block=20, steps={(IMPL, CASE): (9, 1.3)})  # its 3rd night is the reported one
    nights[-1] = with_error(nights[-1])
    files = write_docs(nights, d)
    db = f"sqlite:///{d / 'kw.db'}"
    assert kwatch("ingest", *files[:-1], "--db", db).returncode == 0
    p = kwatch("nightly", "--db", db, "--result", files[-1], "--out-dir", str(d / "out"))
    assert p.returncode in (0, 1), p.stdout + p.stderr
    return d / "out"


def test_nightly_markdown_with_hostile_names(nightly_report):
    md = (nightly_report / "nightly.md").read_text()
    assert "### Failures" in md and "tick" in md  # the hostile names are in the report
    html = render(md)
    assert_inert(html)
    assert "<script" not in html and "pwned" in html  # the message is there, as text


def test_nightly_html_with_hostile_names_in_chromium(nightly_report, browser):
    driver = browser
    from selenium.webdriver.common.by import By

    page = (nightly_report / "nightly.html").read_text()
    assert IMPL not in page and "<img src=x" not in page
    driver.get((nightly_report / "nightly.html").as_uri())
    time.sleep(2.0)
    assert driver.title != "pwned"
    assert not driver.find_elements(By.CSS_SELECTOR, "img, pre script, pre b, .main-svg a")
    titles = " ".join(e.text for e in driver.find_elements(By.CSS_SELECTOR, ".gtitle"))
    assert "<img src=x" in titles  # the plot titles show the name as characters


def test_dashboard_captions_hovers_and_legends_with_hostile_names(tmp_path, browser):
    driver = browser
    from selenium.webdriver.common.by import By

    from tests.test_dashboard_browser import serve, wait_rendered
    from tests.test_dashboard_pages import ingest

    base = hostile_doc(load(H200))
    url = f"sqlite:///{tmp_path / 'kw.db'}"
    ingest(url, [("b", base), ("c", with_error(slowed(base)))])
    with serve(url, tmp_path) as web:
        from urllib.parse import quote

        for path in ("compare", f"trends?technique=gemm_fp32_emulation&impl={quote(IMPL)},cublas_fp32"
                               f"&case={quote(CASE)}&metric=latency_ms"):
            driver.get(f"{web}/{path}")
            wait_rendered(driver, 1, timeout=180)  # the compare page is slow on a loaded CPU
            time.sleep(1.0)
            assert driver.title != "pwned"
            found = driver.find_elements(By.CSS_SELECTOR, "img[src=x], .main-svg a, "
                                         "[data-testid=stMarkdownContainer] a:not([href^='#'])")
            assert not found, (path, [e.get_attribute("outerHTML")[:300] for e in found])
            assert not driver.find_elements(By.CSS_SELECTOR, '[data-testid="stException"]')
        legend = " ".join(e.text for e in driver.find_elements(By.CSS_SELECTOR, ".legendtext"))
        caption = " ".join(e.text for e in driver.find_elements(By.CSS_SELECTOR, '[data-testid="stMain"] '
                                                                '[data-testid="stCaptionContainer"]'))
        assert "<img src=x" in legend, legend
        assert "[click](https://evil.example/x)" in caption.replace("\u200b", ""), caption

