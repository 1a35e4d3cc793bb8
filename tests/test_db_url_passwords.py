"""Passwords with every special character, raw or percent-encoded: the URL opens a real PostgreSQL
database (upgrade, ingest, gate) and no message shows the password; masking of raw spaces and '@'."""
from __future__ import annotations

import json
import uuid
from urllib.parse import quote

import pytest
from sqlalchemy import make_url

from db.urls import mask_url, normalize, scrub
from tests.conftest import PG_ADMIN, _pg_available, kwatch

SPECIALS = "!\"#$%&'()*,/:;<=>?[\\]^`{|}"


@pytest.mark.parametrize("password", ["p w d", "a@b@c", "x" + SPECIALS, SPECIALS + " @" + SPECIALS, "100%", "%zz9"])
@pytest.mark.parametrize("encoded", [False, True])
def test_normalize_keeps_the_password_and_mask_hides_it(password, encoded):
    written = quote(password, safe="") if encoded else password
    url = f"postgresql://kw:{written}@db.example:5432/kw?sslmode=require"
    u = make_url(normalize(url))
    assert (u.username, u.password, u.host, u.port, u.database) == ("kw", password, "db.example", 5432, "kw")
    assert mask_url(url) == "postgresql://kw:***@db.example:5432/kw?sslmode=require"
    # quoted in a message, raw, encoded or as SQLAlchemy renders it
    for form in (url, normalize(url), make_url(normalize(url)).render_as_string(hide_password=False)):
        msg = scrub(f"gate: cannot open {form}: failed to resolve host '{password.split('@')[-1]}@db.example'")
        assert password not in msg and quote(password, safe="") not in msg, msg


def test_a_url_without_password_or_with_an_at_in_its_query_is_unchanged():
    for url in ("postgresql://kw@db/kw", "sqlite:///kwatch.db", "postgresql://db/kw?application_name=a@b"):
        assert normalize(url) == url


@pytest.fixture
def special_role():
    """A login role and its database; its password holds every special character, a space and an '@'."""
    why = _pg_available()
    if why:
        pytest.skip(why)
    from sqlalchemy import create_engine, text

    tag = uuid.uuid4().hex[:8]
    role, password = f"kw_sp_{tag}", f"Pw {SPECIALS}@Tail{uuid.uuid4().hex[:6]}"
    admin = create_engine(PG_ADMIN, isolation_level="AUTOCOMMIT")
    with admin.connect() as c:
        c.execute(text(f"CREATE ROLE {role} LOGIN PASSWORD '" + password.replace("'", "''") + "'"))
        c.execute(text(f'CREATE DATABASE "{role}" OWNER {role}'))
    try:
        yield role, password
    finally:
        from db.engine import make_engine

        for url in (f"postgresql://{role}:{password}@127.0.0.1:5432/{role}",):
            make_engine(url).dispose()
        with admin.connect() as c:
            c.execute(text(f'DROP DATABASE IF EXISTS "{role}" WITH (FORCE)'))
            c.execute(text(f"DROP ROLE IF EXISTS {role}"))
        admin.dispose()


@pytest.mark.postgres
@pytest.mark.parametrize("encoded", [False, True])
def test_every_command_works_with_a_special_password_and_never_prints_it(special_role, smoke_file, tmp_path, encoded):
    """(This server trusts 127.0.0.1, so it does not check the password; the URL is parsed, migrated
    through Alembic and connected as the role end to end, and the role's password is the one parsed.)"""
    role, password = special_role
    url = f"postgresql://{role}:{quote(password, safe='') if encoded else password}@127.0.0.1:5432/{role}"
    assert make_url(normalize(url)).password == password and make_url(normalize(url)).username == role
    outs = []
    for args in (["db", "upgrade"], ["ingest", str(smoke_file)], ["gate", "--baseline", "no-such", "--candidate", "x"]):
        p = kwatch(*args, "--db", url, timeout=600)
        outs.append((args, p.returncode, p.stdout + p.stderr))
    run_id = json.loads(smoke_file.read_text())["run"]["id"]
    report = tmp_path / "gate.json"
    p = kwatch("gate", "--baseline", run_id, "--candidate", run_id, "--json", str(report), "--db", url, timeout=600)
    outs.append(("gate run", p.returncode, p.stdout + p.stderr))
    p = kwatch("db", "upgrade", env={"KWATCH_DB": url})
    outs.append(("KWATCH_DB", p.returncode, p.stdout + p.stderr))
    for args, code, out in outs:
        for form in (password, quote(password, safe=""), password.split("@")[-1], "Pw " + SPECIALS[:6]):
            assert form not in out, (args, out[-1500:])
        assert "Traceback" not in out and "interpolation" not in out, (args, out[-1500:])
    assert [code for _, code, _ in outs] == [0, 0, 2, 0, 0], outs
    assert f"{role}:***@127.0.0.1:5432/{role}" in outs[0][2] and "neither a file" in outs[2][2]
    assert report.is_file()
