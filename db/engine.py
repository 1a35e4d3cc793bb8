"""Database URL resolution, engines and sessions; the schema is brought to head on open."""
from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.orm import sessionmaker

DEFAULT_URL = "sqlite:///kwatch.db"
MIGRATIONS = Path(__file__).resolve().parent / "migrations"


def resolve_url(url: str | None = None) -> str:
    """--db beats KWATCH_DB beats the embedded default sqlite:///kwatch.db."""
    return url or os.environ.get("KWATCH_DB") or DEFAULT_URL


def _sqlite_pragmas(dbapi_conn, _record) -> None:
    cur = dbapi_conn.cursor()
    cur.execute("PRAGMA foreign_keys=ON")
    cur.execute("PRAGMA journal_mode=WAL")
    cur.close()


@lru_cache(maxsize=16)
def make_engine(url: str) -> Engine:
    """An engine for url (psycopg 3 for plain postgresql:// URLs)."""
    if url.startswith("postgresql://"):
        url = "postgresql+psycopg://" + url[len("postgresql://"):]
    engine = create_engine(url, future=True, pool_pre_ping=True)
    if engine.dialect.name == "sqlite":
        event.listen(engine, "connect", _sqlite_pragmas)
    return engine


def alembic_config(engine: Engine):
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    cfg.set_main_option("sqlalchemy.url", engine.url.render_as_string(hide_password=False))
    return cfg


def upgrade(engine: Engine, revision: str = "head") -> None:
    """Run Alembic migrations up to `revision` on engine's database."""
    from alembic import command

    cfg = alembic_config(engine)
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, revision)


_upgraded: set[str] = set()


def open_db(url: str | None = None, migrate: bool = True) -> sessionmaker:
    """A session factory for the resolved URL, with the schema at head (once per process)."""
    engine = make_engine(resolve_url(url))
    key = str(engine.url)
    if migrate and key not in _upgraded:
        upgrade(engine)
        _upgraded.add(key)
    return sessionmaker(engine, expire_on_commit=False)
