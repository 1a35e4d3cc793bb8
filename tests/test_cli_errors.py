"""Every mistyped name, unreadable file, bad URL, unreachable or unmigrated database is one line on
stderr and exit 2, and no command creates a database it was not asked to create."""
import pytest

from tests.conftest import PG_ADMIN, kwatch

PG_SERVER = PG_ADMIN.rsplit("/", 1)[0]


def one_line_error(proc, *words):
    lines = [x for x in proc.stderr.splitlines() if x.strip()]
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr and len(lines) <= 6, proc.stderr[-2000:]
    text = " ".join(proc.stderr.split())
    for w in words:
        assert w in text, proc.stderr


@pytest.mark.parametrize("args,words", [
    (["list", "-t", "nope"], ["unknown technique 'nope'"]),
    (["list", "--tier", "bogus"], ["tier must be one of"]),
    (["run", "-t", "nope"], ["unknown technique 'nope'"]),
    (["detect", "--db", "sqlite:////missing_dir/x.db"], ["no database at sqlite:////missing_dir/x.db"]),
    (["ingest", "--db", "sqlite:////missing_dir/x.db", "/no/such/file.json"], ["cannot read"]),
    (["detect", "--db", "nonsense"], ["not a database URL"]),
    (["detect", "--db", "mysqlx://h/db"], ["unknown database kind"]),
    (["detect", "--db", f"{PG_SERVER}/kw_does_not_exist"], ["cannot open the database", "does not exist"]),
    (["detect", "--db", "postgresql://nobody@127.0.0.1:1/x"], ["cannot open the database"]),
    (["host-pairs", "/no/such/folder"], ["fewer than two result files match"]),
])
def test_one_line_errors(tmp_path, args, words):
    one_line_error(kwatch(*args, cwd=tmp_path), *words)
    assert not (tmp_path / "kwatch.db").exists()


def test_read_commands_create_no_database(tmp_path):
    for args in (["gate", "--baseline", "nope", "--candidate", "nope2"], ["detect"], ["ack", "1", "--who", "me", "--why", "test"],
                 ["dashboard"], ["gate", "--baseline", "abc", "--candidate", "def", "--db", "sqlite:///other.db"]):
        proc = kwatch(*args, cwd=tmp_path, env={"KWATCH_DB": ""})
        assert proc.returncode == 2 and "no database at" in proc.stderr, (args, proc.stderr[-2000:])
    assert list(tmp_path.iterdir()) == []


def test_not_a_database_and_unmigrated_database(tmp_path, pg_url):
    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(b"this is not sqlite" * 100)
    one_line_error(kwatch("dashboard", "--db", f"sqlite:///{garbage}"), "not a database")
    one_line_error(kwatch("detect", "--db", pg_url), "holds no KernelWatch tables")
    one_line_error(kwatch("gate", "--baseline", "a1b2c3d4e5", "--candidate", "x", "--db", pg_url),
                   "holds no KernelWatch tables")
