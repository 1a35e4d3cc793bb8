"""Database URL resolution, engines and sessions; the schema is brought to head on open."""
from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

from sqlalchemy import Engine, create_engine, event, inspect, make_url, text
from sqlalchemy.orm import sessionmaker

from db.json_text import loads
from db.urls import mask_url, normalize

DEFAULT_URL = "sqlite:///kwatch.db"
MIGRATIONS = Path(__file__).resolve().parent / "migrations"


def resolve_url(url: str | None = None) -> str:
    """--db beats KWATCH_DB beats the embedded default sqlite:///kwatch.db."""
    return normalize(url or os.environ.get("KWATCH_DB") or DEFAULT_URL)


def _sqlite_pragmas(dbapi_conn, _record) -> None:
    cur = dbapi_conn.cursor()
    cur.execute("PRAGMA foreign_keys=ON")
    cur.execute("PRAGMA journal_mode=WAL")
    cur.close()


class NoDatabase(RuntimeError):
    """The URL names no KernelWatch database, and the command was not one that creates it."""


class BadDatabaseUrl(NoDatabase):
    """The URL cannot name a KernelWatch database (another kind of database, a port that is not a number)."""


BACKENDS = ("sqlite", "postgresql")


def check_url(url: str) -> None:
    """Raise BadDatabaseUrl, in one line with the password masked, for a URL no engine here can open."""
    try:
        backend = make_url(url).get_backend_name()
    except ValueError as exc:  # SQLAlchemy's int() of the port
        why = "its port is not a number" if "int()" in str(exc) else f"it cannot be read ({exc})"
        raise BadDatabaseUrl(f"{mask_url(url)}: {why}") from None
    except Exception:  # ArgumentError: not a URL at all (reported by create_engine, masked by the caller)
        return
    if backend not in BACKENDS:
        raise BadDatabaseUrl(f"{mask_url(url)}: unknown database kind {backend!r}; KernelWatch stores into "
                             "SQLite (sqlite:///FILE) or PostgreSQL (postgresql://...)")


@lru_cache(maxsize=16)
def make_engine(url: str) -> Engine:
    """An engine for url (psycopg 3 for plain postgresql:// URLs; a raw password is encoded first)."""
    url = normalize(url)
    check_url(url)
    if url.startswith("postgresql://"):
        url = "postgresql+psycopg://" + url[len("postgresql://"):]
    engine = create_engine(url, future=True, pool_pre_ping=True, json_deserializer=loads)
    if engine.dialect.name == "sqlite":
        event.listen(engine, "connect", _sqlite_pragmas)
    return engine


def alembic_config(engine: Engine):
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    # configparser reads '%' as interpolation: a percent-encoded password needs it doubled
    cfg.set_main_option("sqlalchemy.url", engine.url.render_as_string(hide_password=False).replace("%", "%%"))
    return cfg


# Any fixed 64-bit key: every KernelWatch process migrating one PostgreSQL database takes this lock.
_MIGRATION_LOCK = 0x6B77617463680001


def upgrade(engine: Engine, revision: str = "head") -> None:
    """Run Alembic migrations up to `revision` on engine's database; on PostgreSQL under a
    transaction-level advisory lock, so concurrent first opens migrate once, one after another."""
    from alembic import command

    cfg = alembic_config(engine)
    with engine.begin() as conn:
        if conn.dialect.name == "postgresql":
            conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": _MIGRATION_LOCK})
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, revision)


def sqlite_path(url: str) -> Path | None:
    """The file of a sqlite URL (None for other backends and in-memory databases)."""
    u = make_url(url)
    if u.get_backend_name() != "sqlite" or u.database in (None, "", ":memory:"):
        return None
    return Path(u.database)


def _has_schema(engine: Engine) -> bool:
    return inspect(engine).has_table("alembic_version")


_upgraded: set[str] = set()


def open_db(url: str | None = None, migrate: bool = True, create: bool = True) -> sessionmaker:
    """A session factory for the resolved URL, with the schema at head (once per process).
    create=False (commands that only read): raise NoDatabase instead of creating a SQLite file or
    the schema of an empty database."""
    resolved = resolve_url(url)
    check_url(resolved)
    path = sqlite_path(resolved)
    if not create and path is not None and not path.is_file():
        raise NoDatabase(f"no database at {mask_url(resolved)} (`kwatch run` or `kwatch ingest` creates one; "
                         "or name another with --db or KWATCH_DB)")
    engine = make_engine(resolved)
    key = str(engine.url)
    if migrate and key not in _upgraded:
        if not create and not _has_schema(engine):
            raise NoDatabase(f"{mask_url(resolved)} holds no KernelWatch tables (`kwatch db upgrade --db URL` "
                             "creates them; `kwatch ingest` stores runs in it)")
        upgrade(engine)
        _upgraded.add(key)
    return sessionmaker(engine, expire_on_commit=False)
