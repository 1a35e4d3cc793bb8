"""`python -m dashboard.serve APP [streamlit options]`: the dashboard's server process (what `kwatch dashboard`
starts). It imports what the pages import before it serves, so that the first page a user opens after a start
does not wait on imports (1.4 s of CPU on the 2-core machine, 2.8 s with the claims' kernel code and torch)."""
from __future__ import annotations

import importlib
import sys

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


def main(argv: list[str]) -> None:
    preload()
    from streamlit.web import cli

    sys.argv = ["streamlit", "run", *argv]
    cli.main()


if __name__ == "__main__":
    main(sys.argv[1:])
