"""dashboard.serve: the server process imports every module a page imports before it serves, so that a
user's first page after a start does not wait on imports."""
import ast
import subprocess
import sys

import pytest
import typer

from tests.conftest import ROOT


def _page_imports() -> set[str]:
    names = set()
    for path in [ROOT / "dashboard" / "app.py", *sorted((ROOT / "dashboard" / "views").glob("*.py"))]:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names.add(node.module)
                names.update(f"{node.module}.{a.name}" for a in node.names)  # a submodule imported by name
    return names


def test_preload_imports_every_module_the_pages_import():
    wanted = sorted(_page_imports())
    assert {"dashboard.health", "plotly.graph_objects", "db.hardware"} <= set(wanted)
    code = ("import sys, json; from dashboard.serve import preload; preload(); "
            f"print(json.dumps([m for m in {wanted!r} if m not in sys.modules]))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    missing = [m for m in __import__("json").loads(out.stdout.strip().splitlines()[-1])
               # `from dashboard import data` names a module; `from x import f` names a function
               if not _is_function(m)]
    assert missing == []


def _is_function(name: str) -> bool:
    module, _, attr = name.rpartition(".")
    if not module:
        return False
    try:
        mod = __import__(module, fromlist=[attr])
    except ImportError:
        return False
    return hasattr(mod, attr) and not isinstance(getattr(mod, attr), type(sys))


def test_kwatch_dashboard_serves_through_it_without_a_file_watcher(monkeypatch, tmp_path):
    """The command it runs (captured, not served): dashboard.serve, no file watcher, no GC after each run."""
    from dashboard import cli
    from db.engine import open_db

    url = f"sqlite:///{tmp_path / 'kw.db'}"
    open_db(url)
    seen = {}
    monkeypatch.setattr(cli.os, "execve", lambda exe, cmd, env: seen.update(cmd=cmd, env=env))
    monkeypatch.setattr(cli.subprocess, "call", lambda cmd, env: 0)  # after the captured exec: serve nothing
    with pytest.raises(typer.Exit):
        cli.dashboard_cmd(db=url, port=8999, address="localhost", headless=True, writes_db=None,
                          identity_header=None)
    cmd = seen["cmd"]
    assert cmd[1:3] == ["-m", "dashboard.serve"] and cmd[3].endswith("app.py")
    assert cmd[cmd.index("--server.fileWatcherType") + 1] == "none"
    assert cmd[cmd.index("--runner.postScriptGC") + 1] == "false"
    assert seen["env"]["KWATCH_DB"] == url


def test_the_spread_cache_is_warmed_before_serving(tmp_path, monkeypatch):
    """A start reads the runs the cache lacks (none the second time); an empty or unreachable database is
    left to the pages and does not stop the server."""
    from dashboard.serve import warm_spreads
    from db.validate import load_and_validate
    from tests.test_dashboard_pages import ingest
    from tests.test_dashboard_url_state import FILES

    monkeypatch.setenv("KWATCH_CACHE_DIR", str(tmp_path / "cache"))
    url = f"sqlite:///{tmp_path / 'kw.db'}"
    ingest(url, [(f, load_and_validate(str(ROOT / f))) for f in FILES])
    assert warm_spreads(url) == len(FILES)
    assert len(list((tmp_path / "cache").glob("spreads-*.json"))) == 1
    assert warm_spreads(url) == 0
    assert warm_spreads(f"sqlite:///{tmp_path / 'none.db'}") == 0
    assert warm_spreads("postgresql://nobody@127.0.0.1:1/none") == 0
