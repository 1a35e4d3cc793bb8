"""Least-privilege PostgreSQL roles for a team database: `kwatch db roles`.

owner   the role that runs `kwatch db upgrade` (owns the tables; the only one that can change the schema)
writer  runners, `kwatch ingest`, the nightly job, the gate, ack and mute: reads and writes rows, cannot
        create, alter or drop anything, nor move the schema version
reader  the dashboard: reads rows only (and its sessions default to read-only transactions)

Run as the owner (it needs CREATEROLE to create the two login roles), after `kwatch db upgrade`; it is
idempotent, and later migrations' tables reach the roles through default privileges.
"""
from __future__ import annotations

from dataclasses import dataclass

from psycopg import sql
from sqlalchemy import Engine, inspect, text


@dataclass
class RoleSet:
    reader: str = "kwatch_reader"
    writer: str = "kwatch_writer"
    reader_password: str | None = None  # None: leave the password as it is (or none, for peer/cert auth)
    writer_password: str | None = None


def statements(engine: Engine, roles: RoleSet) -> list[str]:
    """The SQL that creates the roles and grants exactly their privileges on engine's database (role
    names and passwords quoted by psycopg: DDL takes no bind parameters)."""
    db, owner = _current(engine)
    ident = lambda name: sql.Identifier(name).as_string()  # noqa: E731
    lit = lambda value: sql.Literal(value).as_string()  # noqa: E731
    reader, writer, dbname, own = ident(roles.reader), ident(roles.writer), ident(db), ident(owner)
    out = []
    for role, password in ((roles.reader, roles.reader_password), (roles.writer, roles.writer_password)):
        out.append(f"DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = {lit(role)}) THEN "
                   f"CREATE ROLE {ident(role)} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE; END IF; END $$")
        if password is not None:
            out.append(f"ALTER ROLE {ident(role)} WITH LOGIN PASSWORD {lit(password)}")
    out += ["REVOKE CREATE ON SCHEMA public FROM PUBLIC",
            f"REVOKE ALL ON SCHEMA public FROM {reader}, {writer}",
            f"GRANT CONNECT ON DATABASE {dbname} TO {reader}, {writer}",
            f"GRANT USAGE ON SCHEMA public TO {reader}, {writer}",
            f"GRANT SELECT ON ALL TABLES IN SCHEMA public TO {reader}",
            f"GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO {writer}",
            f"GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO {writer}",
            f"ALTER DEFAULT PRIVILEGES FOR ROLE {own} IN SCHEMA public GRANT SELECT ON TABLES TO {reader}",
            f"ALTER DEFAULT PRIVILEGES FOR ROLE {own} IN SCHEMA public "
            f"GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO {writer}",
            f"ALTER DEFAULT PRIVILEGES FOR ROLE {own} IN SCHEMA public GRANT USAGE, SELECT ON SEQUENCES TO {writer}",
            f"ALTER ROLE {reader} SET default_transaction_read_only = on"]
    if _has_table(engine, "alembic_version"):  # the schema version moves only with a migration
        out.append(f"REVOKE INSERT, UPDATE, DELETE ON alembic_version FROM {writer}")
    return out


def create_roles(engine: Engine, roles: RoleSet) -> list[str]:
    """Apply statements() in one transaction; returns them with passwords masked (for the log)."""
    stmts = statements(engine, roles)
    raw = engine.raw_connection()  # psycopg itself: DDL with quoted literals, no parameter parsing
    try:
        with raw.cursor() as cur:
            for s in stmts:
                cur.execute(s.encode())
        raw.commit()
    finally:
        raw.close()
    masked = {p for p in (roles.reader_password, roles.writer_password) if p}
    return [_mask(s, masked) for s in stmts]


def _mask(stmt: str, passwords: set[str]) -> str:
    for p in passwords:
        stmt = stmt.replace(sql.Literal(p).as_string(), "'***'")
    return stmt


def _current(engine: Engine) -> tuple[str, str]:
    with engine.connect() as conn:
        return tuple(conn.execute(text("SELECT current_database(), current_user")).one())


def _has_table(engine: Engine, name: str) -> bool:
    return inspect(engine).has_table(name)
