"""dashboard.bench_first_load in a real Chromium: the first load after a start costs the server CPU, the
spread cache a start leaves is found by the next start, and the table says per page what was measured."""
import shutil

import pytest

from tests.conftest import ROOT

pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(not ((shutil.which("chromium") or shutil.which("chromium-browser"))
                                      and shutil.which("chromedriver")),
                                 reason="Chromium or chromedriver not installed (apt-get install chromium "
                                        "chromium-driver): the browser test cannot run")]


def test_first_loads_measured_and_the_cache_kept_between_starts(tmp_path):
    from dashboard.bench_first_load import measure, table
    from db.validate import load_and_validate
    from tests.test_dashboard_pages import ingest
    from tests.test_dashboard_url_state import FILES

    url = f"sqlite:///{tmp_path / 'kw.db'}"
    ingest(url, [(f, load_and_validate(str(ROOT / f))) for f in FILES])
    rows = measure(url, ["health?tier=smoke"], 1, tmp_path / "work")  # the two smoke runs are compared
    (row,) = rows
    assert row["first load (empty cache)"] > 0 and row["first load (restart)"] > 0 and row["next load"] >= 0
    assert row["start-up (restart)"] > 0.5  # the preload: pandas, plotly, scipy, the claims' modules
    assert list((tmp_path / "work" / "cache_0_0").glob("spreads-*.json"))  # left by the first start
    assert row["next load"] < row["first load (empty cache)"]
    md = table(rows)
    assert md.splitlines()[2].startswith("| health?tier=smoke | ") and md.count("|") == 3 * 6
