"""Least privilege on the real PostgreSQL: `kwatch db roles` run by an owner role with a password; the
reader cannot write, the writer cannot migrate; the dashboard works through the reader. SQLite: the
dashboard's connection is opened read-only."""
from __future__ import annotations

import uuid

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.exc import DBAPIError

from tests.conftest import PG_ADMIN, _pg_available, kwatch


@pytest.fixture
def team_db():
    """A database owned by a login role with a password and CREATEROLE, with the reader and writer roles
    made by `kwatch db roles` at the first revision; the writer then tries `kwatch db upgrade`, and the
    owner brings the schema to head. Yields the URLs, the roles command's output, the tag and the
    writer's upgrade attempt."""
    why = _pg_available()
    if why:
        pytest.skip(why)
    tag = uuid.uuid4().hex[:10]
    owner, reader, writer, name = f"kw_own_{tag}", f"kw_rd_{tag}", f"kw_wr_{tag}", f"kw_team_{tag}"
    admin = create_engine(PG_ADMIN, isolation_level="AUTOCOMMIT")
    with admin.connect() as c:
        c.execute(text(f"CREATE ROLE {owner} LOGIN CREATEROLE PASSWORD 'own-{tag}'"))
        c.execute(text(f'CREATE DATABASE "{name}" OWNER {owner}'))
    host = PG_ADMIN.split("@", 1)[1].rsplit("/", 1)[0]
    urls = {"owner": f"postgresql://{owner}:own-{tag}@{host}/{name}",
            "reader": f"postgresql://{reader}:rd-{tag}@{host}/{name}",
            "writer": f"postgresql://{writer}:wr-{tag}@{host}/{name}"}
    try:
        assert kwatch("db", "upgrade", "--db", urls["owner"], "--revision", "0001").returncode == 0
        p = kwatch("db", "roles", "--db", urls["owner"], "--reader", reader, "--writer", writer,
                   env={"KWATCH_READER_PASSWORD": f"rd-{tag}", "KWATCH_WRITER_PASSWORD": f"wr-{tag}"})
        assert p.returncode == 0, p.stdout + p.stderr
        by_writer = kwatch("db", "upgrade", "--db", urls["writer"])
        assert kwatch("db", "upgrade", "--db", urls["owner"]).returncode == 0
        yield urls, p.stdout + p.stderr, tag, by_writer
    finally:
        from db.engine import make_engine

        for u in urls.values():
            make_engine(u).dispose()
        with admin.connect() as c:
            c.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
            for role in (reader, writer, owner):
                c.execute(text(f"DROP ROLE IF EXISTS {role}"))
        admin.dispose()


def _sql(url: str, stmt: str):
    eng = create_engine(url.replace("postgresql://", "postgresql+psycopg://"))
    try:
        with eng.begin() as c:
            res = c.execute(text(stmt))
            return res.all() if res.returns_rows else None
    finally:
        eng.dispose()


def _refused(url: str, stmt: str) -> str:
    with pytest.raises(DBAPIError) as exc:
        _sql(url, stmt)
    return str(exc.value.orig)


def test_roles_command_prints_no_password_and_is_idempotent(team_db):
    urls, out, tag, _ = team_db
    assert f"rd-{tag}" not in out and f"wr-{tag}" not in out and f"own-{tag}" not in out
    assert "PASSWORD '***'" in out and "default_transaction_read_only" in out
    again = kwatch("db", "roles", "--db", urls["owner"], "--reader", f"kw_rd_{tag}", "--writer", f"kw_wr_{tag}")
    assert again.returncode == 0, again.stdout + again.stderr


def test_writer_stores_runs_reader_cannot_write(team_db, smoke_file):
    urls, _, _, _ = team_db
    p = kwatch("ingest", str(smoke_file), "--db", urls["writer"])
    assert p.returncode == 0, p.stdout + p.stderr
    assert _sql(urls["reader"], "SELECT count(*) FROM runs")[0][0] == 1
    p = kwatch("mute", "add", "-t", "gemm_fp32_emulation", "--who", "ci", "--why", "flaky", "--db", urls["reader"])
    assert p.returncode != 0 and "read-only transaction" in p.stdout + p.stderr
    for stmt in ("INSERT INTO ci_mutes (technique, who, why, created_at) VALUES ('x', 'a', 'b', now())",
                 "UPDATE runs SET tier = 'x'", "DELETE FROM results"):
        assert "read-only transaction" in _refused(urls["reader"], stmt)
    # with the session default switched back, the grants still refuse
    msg = _refused(urls["reader"], "SET default_transaction_read_only = off; "
                                   "SET TRANSACTION READ WRITE; DELETE FROM results")
    assert "permission denied" in msg


def test_writer_cannot_migrate_or_move_the_schema_version(team_db):
    urls, _, _, by_writer = team_db
    assert by_writer.returncode != 0 and "permission denied" in by_writer.stdout + by_writer.stderr
    for stmt, why in (("CREATE TABLE evil (x int)", "permission denied for schema public"),
                      ("ALTER TABLE runs ADD COLUMN evil int", "must be owner"),
                      ("DROP TABLE results", "must be owner"),
                      ("UPDATE alembic_version SET version_num = '0001'", "permission denied")):
        assert why in _refused(urls["writer"], stmt), stmt


def test_tables_of_later_migrations_reach_the_roles(team_db):
    """ci_mutes comes with revision 0002, after the roles were made: default privileges grant it."""
    urls, _, _, _ = team_db
    _sql(urls["writer"], "INSERT INTO ci_mutes (technique, who, why, created_at) VALUES ('t', 'a', 'b', now())")
    assert _sql(urls["reader"], "SELECT count(*) FROM ci_mutes")[0][0] == 1


def test_dashboard_pages_work_through_the_reader(team_db, smoke_file, monkeypatch):
    from tests.test_dashboard_pages import PAGES, run_page

    urls, _, _, _ = team_db
    assert kwatch("ingest", str(smoke_file), "--db", urls["writer"]).returncode == 0
    for page in PAGES:
        at = run_page(urls["reader"], page, monkeypatch)
        assert not at.exception, (page, [e.value for e in at.exception])


def test_dashboard_sqlite_connection_is_read_only(tmp_path, smoke_file):
    from db.queries import read_engine, runs

    url = f"sqlite:///{tmp_path / 'kw.db'}"
    assert kwatch("ingest", str(smoke_file), "--db", url).returncode == 0
    assert len(runs(url)) == 1
    with pytest.raises(DBAPIError) as exc:
        with read_engine(url).begin() as c:
            c.execute(text("DELETE FROM results"))
    assert "readonly" in str(exc.value.orig)
    assert "mode=ro" in str(read_engine(url).url)
