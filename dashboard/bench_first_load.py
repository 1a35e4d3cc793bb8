"""Server CPU seconds of each dashboard page's first load after a start, in a real browser.

    python -m dashboard.bench_large --committed --no-detect --pages health   # builds /tmp/kw_committed.db once
    python -m dashboard.bench_first_load --db sqlite:////tmp/kw_committed.db [--pages health,compare] [--repeats 3]
    python -m dashboard.bench_first_load --db sqlite:////tmp/kw_committed.db --postgres   # a PostgreSQL copy of it

Per page, `kwatch dashboard` is started twice on a free port: once with an empty spread cache (a new host, or
new verdict code: db.spread_cache) and once with the cache the first start left (any later restart). Each time
headless Chromium opens that page first, waits until the page has finished running and stopped changing,
then opens it again. Server CPU is the process's user + system time from /proc (Linux), read before and after
each load; the start-up (imports, db.spread_cache not included) is reported apart.
"""
from __future__ import annotations

import argparse
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

ROOT = Path(__file__).resolve().parent.parent
PAGES = ["health", "alerts", "trends", "compare", "hardware", "runs", "numerics", "retrieval", "claims", "cost-model"]


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process and its waited-for children (/proc/PID/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return sum(int(x) for x in fields[11:15]) / os.sysconf("SC_CLK_TCK")


@contextmanager
def server(url: str, cache_dir: Path, log: Path) -> Iterator[tuple[str, int]]:
    """`kwatch dashboard` over url with KWATCH_CACHE_DIR=cache_dir; yields (base URL, server pid)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "KWATCH_CACHE_DIR": str(cache_dir)}
    with open(log, "w") as out:
        proc = subprocess.Popen([sys.executable, "-c", "from ci.cli import main; main()", "dashboard", "--db", url,
                                 "--port", str(port), "--address", "127.0.0.1"], cwd=ROOT, env=env, stdout=out,
                                stderr=subprocess.STDOUT)
        base = f"http://127.0.0.1:{port}"
        try:
            for _ in range(240):
                if proc.poll() is not None:
                    raise RuntimeError(f"the dashboard exited: {log.read_text()[-2000:]}")
                try:
                    if urllib.request.urlopen(f"{base}/_stcore/health", timeout=2).read() == b"ok":
                        break
                except OSError:
                    time.sleep(0.25)
            else:
                raise RuntimeError("the dashboard did not answer /_stcore/health in 60 s")
            yield base, proc.pid
        finally:
            proc.terminate()
            proc.wait(timeout=30)


def browser():
    """Headless Chromium through selenium (Debian's chromium and chromedriver)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = shutil.which("chromium") or shutil.which("chromium-browser") or ""
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--window-size=1500,1100", "--disable-background-networking", "--no-first-run"):
        opts.add_argument(flag)
    drv = webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=opts)
    drv.set_page_load_timeout(120)
    return drv


def settled(drv, timeout: float = 180.0, quiet: float = 1.5) -> None:
    """Wait until the page's script has finished (no running indicator), a heading is drawn, and the number
    of drawn elements has not changed for `quiet` seconds."""
    js = ("return [document.querySelectorAll('[data-testid=stStatusWidget]').length,"
          " document.querySelectorAll('[data-testid=stHeading]').length,"
          " document.querySelectorAll('[data-testid=stMain] [data-testid=stElementContainer]').length]")
    t0, last, since = time.monotonic(), None, time.monotonic()
    while time.monotonic() - t0 < timeout:
        state = drv.execute_script(js)
        if state != last:
            last, since = state, time.monotonic()
        elif state[0] == 0 and state[1] > 0 and time.monotonic() - since >= quiet:
            return
        time.sleep(0.1)
    raise RuntimeError(f"the page did not settle in {timeout} s (last state {last})")


def load(drv, base: str, page: str, pid: int) -> float:
    """Server CPU seconds spent while the browser opens base/page until it has settled."""
    before = cpu_seconds(pid)
    drv.get(f"{base}/{page}")
    time.sleep(0.3)
    settled(drv)
    return cpu_seconds(pid) - before


def measure(url: str, pages: list[str], repeats: int = 1, work: Path | None = None) -> list[dict]:
    """Per page and repeat: start-up CPU, first load with an empty spread cache, first load after a restart
    (the cache kept), and the load after it."""
    work = Path(work or tempfile.mkdtemp(prefix="kw_first_load_"))
    work.mkdir(parents=True, exist_ok=True)
    drv = browser()
    rows = []
    try:
        for i, page in enumerate(pages):
            for rep in range(repeats):
                cache = work / f"cache_{i}_{rep}"
                shutil.rmtree(cache, ignore_errors=True)
                row = {"page": page, "repeat": rep}
                for label in ("empty cache", "restart"):
                    with server(url, cache, work / "server.log") as (base, pid):
                        time.sleep(0.5)
                        row[f"start-up ({label})"] = cpu_seconds(pid)
                        row[f"first load ({label})"] = load(drv, base, page, pid)
                        if label == "restart":
                            row["next load"] = load(drv, base, page, pid)
                    drv.get("about:blank")
                rows.append(row)
                print(" · ".join(f"{k} {v:.2f} s" if isinstance(v, float) else f"{k} {v}" for k, v in row.items()),
                      flush=True)
    finally:
        drv.quit()
    return rows


def table(rows: list[dict]) -> str:
    """Markdown: per page the median over repeats (and the range where there are several)."""
    cols = ["start-up (restart)", "first load (empty cache)", "first load (restart)", "next load"]
    out = ["| page | " + " | ".join(f"{c}, server CPU s" for c in cols) + " |", "|---" * (len(cols) + 1) + "|"]
    for page in dict.fromkeys(r["page"] for r in rows):
        cells = []
        for c in cols:
            v = [r[c] for r in rows if r["page"] == page]
            cells.append(f"{statistics.median(v):.2f}" + (f" ({min(v):.2f}-{max(v):.2f})" if len(v) > 1 else ""))
        out.append(f"| {page} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", default="sqlite:////tmp/kw_committed.db")
    ap.add_argument("--pages", default=",".join(PAGES), help="comma-separated url paths (a query allowed: "
                    "health?tier=smoke)")
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--postgres", nargs="?", const="postgresql://postgres@127.0.0.1:5432/test", default=None,
                    metavar="ADMIN_URL", help="measure a PostgreSQL copy of the --db SQLite file, made on this "
                    "server and dropped after (the database server's own CPU is not counted)")
    a = ap.parse_args(argv)
    pages = [p for p in a.pages.split(",") if p]
    if a.postgres is None:
        rows = measure(a.db, pages, a.repeats)
    else:
        from dashboard import bench_pg
        from db.engine import sqlite_path

        with bench_pg.twin(sqlite_path(a.db), a.postgres) as url:
            copied = bench_pg.copy_tables(sqlite_path(a.db), url)
            print(f"copied into PostgreSQL: {copied.get('results', 0)} results", flush=True)
            rows = measure(url, pages, a.repeats)
    print(f"{os.cpu_count()} CPUs, load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(table(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
