"""A PostgreSQL twin of a page-timing database: a fresh database on a server, every table of the SQLite
file copied into it (COPY), dropped again after the timing (dashboard.bench_large --postgres)."""
from __future__ import annotations

import sqlite3
import uuid
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import psycopg
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from db.engine import open_db

ADMIN = "postgresql://postgres@127.0.0.1:5432/test"  # trust auth on this machine; any database to connect to
ORDER = ["environments", "benchmarks", "runs", "results"]  # parents before the tables that reference them


def _psycopg(url: str) -> str:
    """url as libpq reads it (no SQLAlchemy driver suffix)."""
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


def copy_tables(sqlite_file: Path, url: str) -> dict[str, int]:
    """Copy every table of the SQLite file that the PostgreSQL database at url also has (schema at head
    there) into it, ids kept and sequences moved past them; returns rows per table."""
    src = sqlite3.connect(sqlite_file)
    names = [r[0] for r in src.execute("SELECT name FROM sqlite_master WHERE type='table'")]
    names = [n for n in ORDER if n in names] + sorted(n for n in names if n not in ORDER and n != "alembic_version")
    out = {}
    with psycopg.connect(_psycopg(url)) as dst:
        dst.execute("SET TIME ZONE 'UTC'")  # SQLite holds UTC times without an offset
        for name in names:
            pg_types = dict(dst.execute("SELECT column_name, data_type FROM information_schema.columns "
                                        "WHERE table_name = %s", (name,)).fetchall())
            cols = [r[1] for r in src.execute(f'PRAGMA table_info("{name}")') if r[1] in pg_types]
            if not cols:
                continue
            flags = [i for i, c in enumerate(cols) if pg_types[c] == "boolean"]  # SQLite stores 0/1
            n = 0
            with dst.cursor().copy(f'COPY "{name}" ({", ".join(cols)}) FROM STDIN') as cp:
                for row in src.execute(f'SELECT {", ".join(cols)} FROM "{name}"'):
                    if flags:
                        row = list(row)
                        for i in flags:
                            row[i] = None if row[i] is None else bool(row[i])
                    cp.write_row(row)
                    n += 1
            if "id" in cols and pg_types["id"] in ("integer", "bigint"):
                dst.execute(f"SELECT setval(pg_get_serial_sequence('{name}', 'id'), "
                            f"coalesce((SELECT max(id) FROM \"{name}\"), 0) + 1, false)")
            out[name] = n
        dst.commit()
        dst.execute("ANALYZE")
    src.close()
    return out


@contextmanager
def twin(sqlite_file: Path, admin: str = ADMIN) -> Iterator[str]:
    """The URL of a new PostgreSQL database (on admin's server) holding the SQLite file's tables,
    dropped when the block ends."""
    name = f"kw_bench_{uuid.uuid4().hex[:10]}"
    eng = create_engine(make_url(admin).set(drivername="postgresql+psycopg"), isolation_level="AUTOCOMMIT")
    with eng.connect() as c:
        c.execute(text(f'CREATE DATABASE "{name}"'))
    url = make_url(admin).set(drivername="postgresql", database=name).render_as_string(hide_password=False)
    try:
        open_db(url)  # the schema at head
        yield url
    finally:
        with eng.connect() as c:
            c.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        eng.dispose()
