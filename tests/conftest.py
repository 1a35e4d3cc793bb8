"""Fixtures: databases (SQLite file and a fresh PostgreSQL database per test) and a smoke run."""
from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PG_ADMIN = os.environ.get("KWATCH_TEST_PG", "postgresql+psycopg://postgres@127.0.0.1:5432/test")


def _pg_available() -> str | None:
    try:
        from sqlalchemy import create_engine, text

        eng = create_engine(PG_ADMIN, isolation_level="AUTOCOMMIT")
        with eng.connect() as c:
            c.execute(text("select 1"))
        eng.dispose()
        return None
    except Exception as exc:  # no server: PostgreSQL tests are skipped with the reason
        return f"PostgreSQL not reachable at {PG_ADMIN}: {type(exc).__name__}"


@pytest.fixture
def pg_url():
    """URL of a brand-new PostgreSQL database, dropped after the test."""
    why = _pg_available()
    if why:
        pytest.skip(why)
    from sqlalchemy import create_engine, text

    from db.engine import make_engine

    name = f"kw_test_{uuid.uuid4().hex[:12]}"
    admin = create_engine(PG_ADMIN, isolation_level="AUTOCOMMIT")
    with admin.connect() as c:
        c.execute(text(f'CREATE DATABASE "{name}"'))
    url = PG_ADMIN.rsplit("/", 1)[0] + f"/{name}"
    yield url
    make_engine(url).dispose()
    with admin.connect() as c:
        c.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    admin.dispose()


@pytest.fixture
def sqlite_url(tmp_path):
    return f"sqlite:///{tmp_path / 'kw.db'}"


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request, tmp_path):
    """Each test using this runs once on SQLite and once on a real PostgreSQL database."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'kw.db'}"
    return request.getfixturevalue("pg_url")


def kwatch(*args: str, env: dict | None = None, cwd: Path | None = None, timeout: float = 900):
    """Run the kwatch CLI in a subprocess; returns CompletedProcess (text)."""
    full_env = {**os.environ, **(env or {})}
    return subprocess.run([sys.executable, "-c", "from ci.cli import main; main()", *args],
                          capture_output=True, text=True, env=full_env, cwd=cwd or ROOT, timeout=timeout)


def json_from_clean_process(script: str, timeout: float = 900):
    """The JSON a Python snippet prints on its last line, run in a fresh process with the repository on
    its path and without TRITON_INTERPRET (compiling for sm_90 without a GPU needs that)."""
    import json

    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env["PYTHONPATH"] = str(ROOT)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, cwd=ROOT,
                          timeout=timeout)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def write_docs(docs, folder: Path, prefix: str = "n") -> list[str]:
    """Write result documents as `<prefix>00.json`, `<prefix>01.json`, ... in folder; their paths in order."""
    import json

    paths = []
    for i, doc in enumerate(docs):
        path = folder / f"{prefix}{i:02d}.json"
        path.write_text(json.dumps(doc))
        paths.append(str(path))
    return paths


@pytest.fixture(scope="session")
def smoke_file(tmp_path_factory) -> Path:
    """A real `kwatch run --tier smoke` of gemm_fp32_emulation on this CPU, written once per session."""
    d = tmp_path_factory.mktemp("smoke")
    out = d / "smoke.json"
    proc = kwatch("run", "--tier", "smoke", "-t", "gemm_fp32_emulation", "--out", str(out),
                  "--db", f"sqlite:///{d / 'kw.db'}")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return out


def pytest_configure(config):
    """Spread caches (db.spread_cache) of the tests' throwaway databases go to a folder of this run, not
    to the user's ~/.cache/kwatch."""
    if "KWATCH_CACHE_DIR" not in os.environ:
        import tempfile

        config._kwatch_cache = os.environ["KWATCH_CACHE_DIR"] = tempfile.mkdtemp(prefix="kwatch_test_cache_")


def pytest_unconfigure(config):
    made = getattr(config, "_kwatch_cache", None)
    if made:
        import shutil

        shutil.rmtree(made, ignore_errors=True)
        os.environ.pop("KWATCH_CACHE_DIR", None)


def pytest_collection_modifyitems(config, items):
    """Tier markers (slow, browser, gpu, postgres) from the central map in tests/tiers.py."""
    from tests.tiers import marks_for

    for item in items:
        spec = getattr(item, "callspec", None)
        for name in sorted(marks_for(item.nodeid, item.fixturenames, spec.params if spec else {})):
            item.add_marker(name)
