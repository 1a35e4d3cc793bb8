"""`kwatch dashboard`: start the Streamlit app against a database (read-only)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Optional

import typer

from db.urls import mask_url

APP = Path(__file__).resolve().parent / "app.py"
WRITES_DB = "KWATCH_WRITES_DB"  # the writer's URL, for the app's web writes
IDENTITY_HEADER = "KWATCH_IDENTITY_HEADER"  # the request header naming the signed-in user


def dashboard_cmd(db: Optional[str] = typer.Option(None, "--db", help="database URL (default: $KWATCH_DB "
                                                   "or sqlite:///kwatch.db)"),
                  port: int = typer.Option(8501, "--port", help="port to serve on"),
                  address: str = typer.Option("localhost", "--address", help="address to bind"),
                  headless: bool = typer.Option(True, "--headless/--browser",
                                                help="do not open a browser window"),
                  writes_db: Optional[str] = typer.Option(None, "--writes-db", help="a writer role's database URL: "
                                                          "turns on acknowledging from the web (needs "
                                                          "--identity-header)"),
                  identity_header: Optional[str] = typer.Option(None, "--identity-header", help="request header "
                                                                "in which the sign-in proxy in front of the "
                                                                "dashboard puts the user (e.g. X-Forwarded-Email)")
                  ) -> None:
    """Start the dashboard (Streamlit) on --port, reading --db (read-only); web writes only with
    --writes-db and --identity-header."""
    from db.engine import open_db, resolve_url

    url = resolve_url(db)
    open_db(url, create=False)  # an existing database, its schema at head
    if bool(writes_db) != bool(identity_header):
        raise typer.BadParameter("web writes need both --writes-db and --identity-header (who is acting)")
    env = {k: v for k, v in os.environ.items() if k not in (WRITES_DB, IDENTITY_HEADER)}
    if writes_db:
        env.update({WRITES_DB: writes_db, IDENTITY_HEADER: identity_header})
    env = {**env, "KWATCH_DB": url,
           "PYTHONPATH": os.pathsep.join(filter(None, [str(APP.parent.parent), os.environ.get("PYTHONPATH")]))}
    # dashboard.serve imports what the pages need before it serves; a served app is not edited in place, so no
    # file watcher polls the source of every imported module; no full collection after every page run (0.16 s)
    cmd = [sys.executable, "-m", "dashboard.serve", str(APP), "--server.port", str(port),
           "--server.address", address, "--server.headless", str(headless).lower(),
           "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none", "--runner.postScriptGC", "false"]
    typer.echo(f"KernelWatch dashboard on http://{address}:{port} reading {mask_url(url)}"
               + (f"; acknowledging as the user in {identity_header}, writing to {mask_url(writes_db)}"
                  if writes_db else "; no web writes"), err=True)
    if hasattr(os, "execve"):  # become Streamlit: a signal to this process reaches the server itself
        sys.stdout.flush()
        sys.stderr.flush()
        os.execve(sys.executable, cmd, env)
    raise typer.Exit(subprocess.call(cmd, env=env))


def register(app: typer.Typer) -> None:
    app.command("dashboard")(dashboard_cmd)
