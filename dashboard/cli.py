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


def dashboard_cmd(db: Optional[str] = typer.Option(None, "--db", help="database URL (default: $KWATCH_DB "
                                                   "or sqlite:///kwatch.db)"),
                  port: int = typer.Option(8501, "--port", help="port to serve on"),
                  address: str = typer.Option("localhost", "--address", help="address to bind"),
                  headless: bool = typer.Option(True, "--headless/--browser",
                                                help="do not open a browser window")) -> None:
    """Start the dashboard (Streamlit) on --port, reading --db."""
    from db.engine import open_db, resolve_url

    url = resolve_url(db)
    open_db(url, create=False)  # an existing database, its schema at head
    env = {**os.environ, "KWATCH_DB": url,
           "PYTHONPATH": os.pathsep.join(filter(None, [str(APP.parent.parent), os.environ.get("PYTHONPATH")]))}
    cmd = [sys.executable, "-m", "streamlit", "run", str(APP), "--server.port", str(port),
           "--server.address", address, "--server.headless", str(headless).lower(),
           "--browser.gatherUsageStats", "false"]
    typer.echo(f"KernelWatch dashboard on http://{address}:{port} reading {mask_url(url)}", err=True)
    if hasattr(os, "execve"):  # become Streamlit: a signal to this process reaches the server itself
        sys.stdout.flush()
        sys.stderr.flush()
        os.execve(sys.executable, cmd, env)
    raise typer.Exit(subprocess.call(cmd, env=env))


def register(app: typer.Typer) -> None:
    app.command("dashboard")(dashboard_cmd)
