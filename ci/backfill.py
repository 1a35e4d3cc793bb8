"""`kwatch backfill REV_RANGE`: the selected techniques measured at each past commit by that commit's
code (a clean tree per commit, the current runner protocol), stored with the commit and its date.

A commit already measured for the same selection is skipped; one whose code cannot be imported is
stored as a run without results saying why (runners.backfill), and the backfill goes on.
"""
from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from sqlalchemy import select

from db.engine import open_db
from db.ingest import ingest_files
from db.models import Run
from runners.backfill import backfill_tree, spec_of
from runners.cli_options import CASE, DEVICE, IMPL, TECH, TIMEOUT
from runners.tree_run import selection
from runners.trees import commits, export_tree, repo_of

console = Console(stderr=True)


def measured(session, shas: list[str], spec: dict) -> set[str]:
    """Commits among shas with a stored backfill run (measured or failed to import) of this selection."""
    want = selection(spec)
    rows = session.execute(select(Run.git_commit, Run.config).where(Run.reason == "backfill",
                                                                     Run.git_commit.in_(shas)))
    return {sha for sha, cfg in rows if ((cfg or {}).get("backfill") or {}).get("selection") == want}


def backfill(rev_range: str, spec: dict, db: Optional[str], every: int = 1,
             out_dir: Path = Path("kwatch-runs/backfill"), repo: Optional[Path] = None) -> list[tuple[str, str]]:
    """Measure and store every not yet measured commit of the range in `repo` (default: the git
    repository of the current directory), oldest first: [(commit, status)]."""
    repo = repo_of(repo or Path.cwd())
    factory = open_db(db)
    infos = commits(rev_range, every, repo)
    with factory() as s:
        done = measured(s, [i["commit"] for i in infos], spec)
    out = []
    with tempfile.TemporaryDirectory(prefix="kwatch-trees-") as tmp:
        for info in infos:
            if info["commit"] in done:
                out.append((info["commit"], "skipped (measured)"))
                continue
            path, status = backfill_tree(export_tree(info, Path(tmp), repo), spec, out_dir)
            ingest_files(factory, [str(path)])
            out.append((info["commit"], status))
            console.print(f"{info['commit'][:12]} {info['date'][:10]} {status}: {info['subject'][:60]}",
                          soft_wrap=True)
    return out


def backfill_cmd(rev_range: str = typer.Argument(..., help="git revision range, e.g. 9fd8447~1..main"),
                 technique: Optional[list[str]] = TECH, impl: Optional[list[str]] = IMPL,
                 case: Optional[list[str]] = CASE,
                 every: int = typer.Option(1, "--every", min=1, help="every Nth commit, counted back from the newest"),
                 tier: str = typer.Option("smoke", "--tier", help="smoke | smoke_full | nightly | full"),
                 device: str = DEVICE, timeout: float = TIMEOUT,
                 out_dir: Path = typer.Option(Path("kwatch-runs/backfill"), "--out-dir"),
                 repo: Optional[Path] = typer.Option(None, "--repo", help="git repository (default: the one "
                                                     "holding the current directory)"),
                 db: Optional[str] = typer.Option(None, "--db", help="database URL")) -> None:
    """Backfill history: run the selection at each commit of REV_RANGE with that commit's code."""
    spec = spec_of(tier, technique, impl, case, device, timeout)
    try:
        done = backfill(rev_range, spec, db, every, out_dir, repo)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="REV_RANGE")
    counts: dict[str, int] = {}
    for _, status in done:
        counts[status] = counts.get(status, 0) + 1
    print(f"backfill: {len(done)} commits: " + ", ".join(f"{n} {s}" for s, n in counts.items()))

