"""`python -m dashboard.serve APP [streamlit options]`: the dashboard's server process (what `kwatch dashboard`
starts). It imports what the pages import before it serves, so that the first page a user opens after a start
does not wait on imports (1.4 s of CPU on the 2-core machine, 2.8 s with the claims' kernel code and torch)
or on learning the run-to-run spreads of runs it has not seen (warm_spreads)."""
from __future__ import annotations

import importlib
import logging
import os
import sys

LOG = logging.getLogger("kwatch.dashboard")
# every module the pages import, and the claims registry's modules (technique packages, torch)
PRELOAD = ("pandas", "numpy", "plotly.graph_objects", "scipy.stats", "sqlalchemy.orm",
           "dashboard.alerts", "dashboard.data", "dashboard.health", "dashboard.plots", "dashboard.runs",
           "dashboard.trend_chart", "dashboard.url_state", "dashboard.verdict", "dashboard.writes",
           "db.alerts", "db.claims", "db.errors", "db.escape", "db.hardware", "db.noise", "db.queries", "db.urls",
           "suite.techniques.prefill_cost_model.common")


def preload() -> None:
    """Import PRELOAD and every claim module (as the Claims page does on its first view)."""
    for name in PRELOAD:
        importlib.import_module(name)
    from suite.claims.registry import all_claims

    all_claims()


def warm_spreads(url: str) -> int:
    """Bring the database's spread cache (db.spread_cache) up to date before serving, so that no page
    waits on reading runs the cache lacks (0.9 s for all 297 committed runs on a new host); returns how
    many runs were read. A database that cannot be read now is left to the pages, which say why."""
    from sqlalchemy.orm import Session

    from db.queries import read_engine
    from db.spread_cache import cache_path, cached_builder
    from db.spread_history import has_runs

    try:
        if not has_runs(url):
            return 0
        with Session(read_engine(url)) as s:
            return cached_builder(s, cache_path(url))[1]
    except Exception as exc:  # noqa: BLE001  (serving goes on; the page shows the database's error)
        LOG.warning("spread cache not warmed: %s", type(exc).__name__)
        return 0


def main(argv: list[str]) -> None:
    preload()
    if os.environ.get("KWATCH_DB"):
        warm_spreads(os.environ["KWATCH_DB"])
    from streamlit.web import cli

    sys.argv = ["streamlit", "run", *argv]
    cli.main()


if __name__ == "__main__":
    main(sys.argv[1:])
