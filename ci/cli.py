"""`kwatch`: the whole command line (runners' list/run plus database, gate and dashboard commands)."""
from __future__ import annotations

import os
import traceback
from typing import Optional

import typer
from typer.exceptions import TyperException
from rich.console import Console

from ci import backfill, claims_cli, hardware_cli, host_pairs, detect, detect_bench, detect_tune, fleet_cli, gate, gate_mutes, grade, nightly
from dashboard import cli as dashboard_cli
from db.engine import make_engine, open_db, resolve_url, upgrade
from db.errors import user_error
from db.ingest import ingest_docs, load_files, store_validated, stored_runs
from db.roles import RoleSet, create_roles
from db.urls import mask_url, scrub
from db.validate import ResultFileError, shorten
from runners import cli as runners_cli

console = Console(stderr=True)
app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_show_locals=False,
                  help="KernelWatch: benchmark, track and gate kernel techniques.")
db_app = typer.Typer(no_args_is_help=True, help="Database maintenance.")
app.add_typer(db_app, name="db")

DB = typer.Option(None, "--db", help="database URL (default: $KWATCH_DB or sqlite:///kwatch.db)")


@app.command("run")
def run_cmd(tier: str = runners_cli.TIER, technique: Optional[list[str]] = runners_cli.TECH,
            impl: Optional[list[str]] = runners_cli.IMPL, case: Optional[list[str]] = runners_cli.CASE,
            out: Optional[str] = typer.Option(None, "--out", "-o", help="result file to write "
                                             "(default: kwatch-runs/TIER-DATE-TIME.json.gz)"),
            db: Optional[str] = DB, no_db: bool = typer.Option(False, "--no-db", help="only write the result file"),
            device: str = runners_cli.DEVICE, reason: str = runners_cli.REASON,
            timeout: float = runners_cli.TIMEOUT, seed: Optional[int] = runners_cli.SEED,
            memory_limit: Optional[float] = runners_cli.MEMORY, repeat: int = runners_cli.REPEAT) -> None:
    """Run a tier, write the result file (--out, default kwatch-runs/), store the run, print a summary;
    exit 1 naming the jobs that failed or errored."""
    opts = runners_cli.options(tier, technique, impl, case, device, reason, timeout, seed, memory_limit)

    def store(path: str, doc: dict) -> str:
        [outcome] = ingest_docs(open_db(db), [(path, doc)])
        return f"{mask_url(resolve_url(db))} (run {outcome.run_id[:12]})"

    if runners_cli.run_and_report(opts, out, repeat, None if no_db else store):
        raise typer.Exit(1)


@app.command("ingest")
def ingest_cmd(files: list[str] = typer.Argument(..., help="result files (schema 1) or pytest-benchmark JSON"),
               db: Optional[str] = DB) -> None:
    """Load result files into the database: idempotent, all files or none."""
    try:
        # Every file read (format detected per file) before the database is opened for writing.
        loaded = load_files(files, stored_runs(db))
    except ResultFileError as exc:
        console.print(f"refused: {scrub(str(exc))}\nnothing was stored.", markup=False, highlight=False,
                      soft_wrap=True)
        raise typer.Exit(2)
    with open_db(db)() as session, session.begin():
        outcomes = store_validated(session, loaded)
    for f, o in zip(files, outcomes):
        what = f"stored {o.results} results" if o.stored else "already stored, skipped"
        partial = " (INCOMPLETE run: it did not finish; stored as incomplete)" if o.incomplete else ""
        console.print(f"{f}: run {o.run_id}: {what}{partial}", markup=False, highlight=False, soft_wrap=True)
    console.print(f"database: {mask_url(resolve_url(db))}")


@db_app.command("upgrade")
def db_upgrade(db: Optional[str] = DB, revision: str = typer.Option("head", "--revision")) -> None:
    """Apply Alembic migrations up to --revision (default head)."""
    upgrade(make_engine(resolve_url(db)), revision)
    console.print(f"{mask_url(resolve_url(db))}: schema at {revision}")


@db_app.command("roles")
def db_roles(db: Optional[str] = DB,
             reader: str = typer.Option("kwatch_reader", "--reader", help="login role for the dashboard"),
             writer: str = typer.Option("kwatch_writer", "--writer", help="login role for runners, ingest, "
                                        "the nightly job, the gate, ack and mute"),
             reader_password_env: str = typer.Option("KWATCH_READER_PASSWORD", "--reader-password-env",
                                                     help="environment variable holding the reader's password "
                                                     "(unset: the password is left as it is)"),
             writer_password_env: str = typer.Option("KWATCH_WRITER_PASSWORD", "--writer-password-env",
                                                     help="environment variable holding the writer's password")) -> None:
    """PostgreSQL: create or update the reader and writer roles with least privilege (run as the owner,
    after `kwatch db upgrade`; idempotent). See db/roles.py."""
    engine = make_engine(resolve_url(db))
    if engine.dialect.name != "postgresql":
        console.print("db roles: only PostgreSQL has roles; a SQLite file is protected by its file permissions")
        raise typer.Exit(2)
    roles = RoleSet(reader, writer, os.environ.get(reader_password_env), os.environ.get(writer_password_env))
    for stmt in create_roles(engine, roles):
        console.print(stmt, markup=False, highlight=False, soft_wrap=True)
    u = engine.url
    for role in (reader, writer):
        console.print(f"{role}: postgresql://{role}@{u.host}{f':{u.port}' if u.port else ''}/{u.database}",
                      markup=False, highlight=False)


# The commands defined in other modules.
app.command("list")(runners_cli.list_cmd)
app.command("estimate")(runners_cli.budget_cli.estimate_cmd)
app.command("claims")(claims_cli.claims_cmd)
app.command("hardware")(hardware_cli.hardware_cmd)
app.command("host-pairs", **host_pairs.COMMAND_SETTINGS)(host_pairs.host_pairs_cmd)
app.command("gate")(gate.gate_cmd)
app.add_typer(gate_mutes.mute_app, name="mute")
app.command("grade")(grade.grade_cmd)
app.command("backfill")(backfill.backfill_cmd)
app.command("submit")(fleet_cli.submit_cmd)
app.command("worker")(fleet_cli.worker_cmd)
app.command("jobs")(fleet_cli.jobs_cmd)
app.command("nightly-fleet")(fleet_cli.nightly_fleet_cmd)
dashboard_cli.register(app)  # dashboard
detect.register(app)  # detect, ack
nightly.register(app)  # nightly
detect_bench.register(app)  # detect-bench
detect_tune.register(app)  # detect-tune


def main() -> None:
    """The console script: a mistake of the user's (a name, file, URL or database) is one line and
    exit 2; any other error one line and exit 1 (KWATCH_TRACEBACK=1: the traceback); any database
    password in them masked."""
    try:
        code = app(standalone_mode=False)
    except typer.Exit as exc:
        raise SystemExit(exc.exit_code)
    except typer.Abort:
        raise SystemExit(130)
    except TyperException as exc:  # usage (typer's click): an unknown command or option, a bad value
        if type(exc).__name__ == "NoArgsIsHelpError":
            exc.show()  # the help itself
            raise SystemExit(exc.exit_code)
        console.print(f"error: {shorten(' '.join(scrub(exc.format_message()).split()))} (--help lists the choices)",
                      markup=False, highlight=False, soft_wrap=True)
        raise SystemExit(getattr(exc, "exit_code", 2))
    except Exception as exc:
        if os.environ.get("KWATCH_TRACEBACK"):
            console.print(scrub(traceback.format_exc()), markup=False, highlight=False)
        message = user_error(exc)
        console.print(f"error: {shorten(' '.join(scrub(message or f'{type(exc).__name__}: {exc}').split()))}",
                      markup=False, highlight=False, soft_wrap=True)
        raise SystemExit(1 if message is None else 2)
    raise SystemExit(code or 0)
