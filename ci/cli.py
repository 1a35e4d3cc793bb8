"""`kwatch`: the whole command line (runners' list/run plus database, gate and dashboard commands)."""
from __future__ import annotations

import importlib
import os
import time
import traceback
from typing import Optional

import typer
from rich.console import Console

from db.urls import mask_url, scrub

from runners import cli as runners_cli

console = Console(stderr=True)
app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_show_locals=False,
                  help="KernelWatch: benchmark, track and gate kernel techniques.")
db_app = typer.Typer(no_args_is_help=True, help="Database maintenance.")
app.add_typer(db_app, name="db")
app.command("list")(runners_cli.list_cmd)

DB = typer.Option(None, "--db", help="database URL (default: $KWATCH_DB or sqlite:///kwatch.db)")

# Modules that add their commands to `app`: each defines register(app).
COMMAND_MODULES: list[str] = ["dashboard.cli", "ci.claims_cli", "ci.gate", "ci.gate_mutes", "ci.detect", "ci.nightly", "ci.grade", "ci.nightly_queue", "ci.detect_bench"]


@app.command("run")
def run_cmd(tier: str = runners_cli.TIER, technique: Optional[list[str]] = runners_cli.TECH,
            impl: Optional[list[str]] = runners_cli.IMPL, case: Optional[list[str]] = runners_cli.CASE,
            out: Optional[str] = typer.Option(None, "--out", "-o", help="result file to write "
                                             "(default: kwatch-runs/TIER-DATE-TIME.json.gz)"),
            db: Optional[str] = DB, no_db: bool = typer.Option(False, "--no-db", help="only write the result file"),
            device: str = runners_cli.DEVICE, reason: str = runners_cli.REASON,
            timeout: float = runners_cli.TIMEOUT, seed: Optional[int] = runners_cli.SEED,
            memory_limit: Optional[float] = runners_cli.MEMORY) -> None:
    """Run a tier, write the result file (--out, default kwatch-runs/), store the run, print a summary;
    exit 1 naming the jobs that failed or errored."""
    opts = runners_cli.options(tier, technique, impl, case, device, reason, timeout, seed, memory_limit)
    path = out or runners_cli.default_out(tier)
    t0 = time.monotonic()
    try:
        rf = runners_cli.run_with_progress(opts, path)
    except KeyError as exc:
        raise typer.BadParameter(str(exc.args[0]))
    stored_in = None
    if not no_db:
        from db.engine import open_db, resolve_url
        from db.ingest import ingest_docs

        [outcome] = ingest_docs(open_db(db), [(path, rf.doc)])
        stored_in = f"{mask_url(resolve_url(db))} (run {outcome.run_id[:12]})"
    if runners_cli.report(rf, path, time.monotonic() - t0, stored_in):
        raise typer.Exit(1)


@app.command("ingest")
def ingest_cmd(files: list[str] = typer.Argument(..., help="result files (schema 1) or pytest-benchmark JSON"),
               db: Optional[str] = DB) -> None:
    """Load result files into the database: idempotent, all files or none."""
    from db.engine import open_db, resolve_url
    from db.ingest import ingest_files
    from db.validate import ResultFileError

    try:
        outcomes = ingest_files(open_db(db), files)  # format detected per file
    except ResultFileError as exc:
        console.print(f"[red]refused:[/red] {exc}\nnothing was stored.")
        raise typer.Exit(2)
    for f, o in zip(files, outcomes):
        what = f"stored {o.results} results" if o.stored else "already stored, skipped"
        console.print(f"{f}: run {o.run_id}: {what}")
    console.print(f"database: {mask_url(resolve_url(db))}")


@db_app.command("upgrade")
def db_upgrade(db: Optional[str] = DB, revision: str = typer.Option("head", "--revision")) -> None:
    """Apply Alembic migrations up to --revision (default head)."""
    from db.engine import make_engine, resolve_url, upgrade

    upgrade(make_engine(resolve_url(db)), revision)
    console.print(f"{mask_url(resolve_url(db))}: schema at {revision}")


for _name in COMMAND_MODULES:
    importlib.import_module(_name).register(app)


def main() -> None:
    """The console script: an unexpected error is one line (KWATCH_TRACEBACK=1: the traceback), any
    database password in it masked."""
    try:
        app()
    except Exception as exc:
        if os.environ.get("KWATCH_TRACEBACK"):
            console.print(scrub(traceback.format_exc()), markup=False, highlight=False)
        console.print(f"error: {type(exc).__name__}: {' '.join(scrub(str(exc)).split())}", markup=False,
                      highlight=False, soft_wrap=True)
        raise SystemExit(1)
