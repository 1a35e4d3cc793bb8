"""`python -m runners export-trees | backfill | ab`: past commits' code under the current runner, no database.

Export needs git (here); backfill and ab need only the exported trees (a GPU host)."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.console import Console

from runners.backfill import backfill_tree, run_ab, spec_of
from runners.tree_run import IMPORT_FAILED
from runners.cli_options import CASE, DEVICE, IMPL, TECH, TIMEOUT
from runners.trees import commit_info, commits, export, find, listed, read_info

console = Console(stderr=True)
TIER = typer.Option("nightly", "--tier", help="smoke | smoke_full | nightly | full")


def export_cmd(rev_range: str = typer.Argument(..., help="git revision range, e.g. f5f32fb~1..main"),
               to: Path = typer.Option(..., "--to", help="folder for the trees"),
               every: int = typer.Option(1, "--every", min=1, help="every Nth commit, counted back from the newest"),
               ref: Optional[list[str]] = typer.Option(None, "--ref", help="also export these single revisions "
                                                       "(A/B sides); repeatable")) -> None:
    """Export clean trees of past commits (their suite/, today's runners/) for backfill or ab."""
    try:
        infos = commits(rev_range, every) if rev_range != "-" else []
        infos += [commit_info(r) for r in ref or []]
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="REV_RANGE")
    for tree in export(infos, to):
        info = read_info(tree)
        print(f"{tree}  {info['date']}  {info['subject'][:70]}")


def backfill_cmd(trees: Path = typer.Option(..., "--trees", help="folder of exported trees"),
                 out_dir: Path = typer.Option(..., "--out-dir"), tier: str = TIER,
                 technique: Optional[list[str]] = TECH, impl: Optional[list[str]] = IMPL,
                 case: Optional[list[str]] = CASE, device: str = DEVICE, timeout: float = TIMEOUT,
                 seed: Optional[int] = typer.Option(None, "--seed")) -> None:
    """Run the selection on every exported tree, oldest first: one result file per commit."""
    spec = spec_of(tier, technique, impl, case, device, timeout, seed)
    for tree in listed(trees):
        out, status = backfill_tree(tree, spec, out_dir)
        console.print(f"{read_info(tree)['commit'][:12]} {status}: {out}", soft_wrap=True)


def ab_cmd(base: str = typer.Option(..., "--base", help="the base revision's exported tree, or its ref with --trees"),
           head: str = typer.Option(..., "--head", help="the head revision's exported tree, or its ref with --trees"),
           trees: Optional[Path] = typer.Option(None, "--trees", help="folder of exported trees to find refs in"),
           out_dir: Path = typer.Option(..., "--out-dir"), tier: str = TIER,
           technique: Optional[list[str]] = TECH, impl: Optional[list[str]] = IMPL,
           case: Optional[list[str]] = CASE, device: str = DEVICE, timeout: float = TIMEOUT,
           rounds: int = typer.Option(2, "--rounds", min=1, help="measurements of each case per side"),
           name: str = typer.Option("ab", "--name", help="files NAME_base.json.gz and NAME_head.json.gz"),
           seed: Optional[int] = typer.Option(None, "--seed")) -> None:
    """Measure base and head interleaved on this machine; write one result file per side."""
    spec = spec_of(tier, technique, impl, case, device, timeout, seed)
    try:
        base, head = (find(trees, r) if trees else Path(r) for r in (base, head))
    except KeyError as exc:
        raise typer.BadParameter(str(exc.args[0]))
    outs = ab_files(out_dir, name)
    proc = run_ab(base, head, spec, outs, rounds)
    if proc.returncode != 0:
        console.print(proc.stderr[-3000:])
        why = "head's code could not be imported or planned" if proc.returncode == IMPORT_FAILED else "failed"
        console.print(f"[red]ab: {why} (exit {proc.returncode})[/red]")
        raise typer.Exit(2)
    print(f"{outs[0]}\n{outs[1]}")


def ab_files(out_dir: Path, name: str) -> tuple[Path, Path]:
    """The two result files of an A/B run: (base, head)."""
    return Path(out_dir) / f"{name}_base.json.gz", Path(out_dir) / f"{name}_head.json.gz"

