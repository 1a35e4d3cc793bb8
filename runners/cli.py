"""`python -m runners`: list and run techniques without a database (for bare GPU hosts)."""
from __future__ import annotations

import signal
import sys
import threading
import time
from pathlib import Path
from typing import Callable, Optional

import typer
from rich.console import Console
from rich.table import Table

from runners import budget_cli, tree_cli
from runners.cli_options import CASE, DEVICE, IMPL, MEMORY, REASON, REPEAT, SEED, TECH, TIER, TIMEOUT
from runners.progress import reporter
from runners.run import RunOptions, execute
from runners.summary import full_table, summary_lines, verdict_line, wrap
from suite.registry import get, techniques
from suite.spec import TIERS

console = Console(stderr=True)
app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_show_locals=False,
                  help="KernelWatch runners.")


@app.command("list")
def list_cmd(technique: Optional[str] = typer.Option(None, "--technique", "-t"),
             tier: Optional[str] = typer.Option(None, "--tier")) -> None:
    """List techniques, implementations and cases."""
    if tier is not None and tier not in TIERS:
        raise typer.BadParameter(f"tier must be one of {', '.join(TIERS)}", param_hint="--tier")
    try:
        techs = [get(technique)] if technique else list(techniques().values())
    except KeyError as exc:
        raise typer.BadParameter(str(exc.args[0]), param_hint="--technique")
    out = Console()
    for tech in techs:
        t = Table(title=f"{tech.name} — {tech.section}", title_justify="left")
        t.add_column("kind"), t.add_column("name"), t.add_column("detail")
        for impl in (tech.impls_for(tier) if tier else tech.impls):
            t.add_row("impl", impl.name, f"v{impl.version} {impl.accuracy} "
                      f"{'baseline ' if impl.baseline else ''}{'' if impl.nightly else 'not-nightly '}"
                      f"{' '.join(impl.requires)}".strip())
        for case in (tech.cases_for(tier) if tier else tech.cases):
            t.add_row("case", case.id, f"{','.join(case.tiers)} {case.params}")
        out.print(t)


def run_with_progress(opts: RunOptions, out: Optional[str]):
    """Execute with progress on stderr (a bar with an ETA on a terminal, plain lines otherwise); SIGTERM
    (`timeout`, a CI job cancelled) ends the run as Ctrl-C does, with the finished jobs in the file."""
    def stop(signum, _frame):
        print(f"stopped by signal {signum}: the result file {out} keeps the jobs that finished",
              file=sys.stderr, flush=True)
        raise SystemExit(128 + signum)

    main = threading.current_thread() is threading.main_thread()  # handlers install there only
    previous = signal.signal(signal.SIGTERM, stop) if main else None
    try:
        with reporter() as progress:
            return execute(opts, out, progress=progress)
    finally:
        if main:
            signal.signal(signal.SIGTERM, previous)


def default_out(tier: str) -> str:
    """Where a run writes its result file when --out is not given."""
    return str(Path("kwatch-runs") / f"{tier}-{time.strftime('%Y%m%d-%H%M%S')}.json.gz")


def report(rf, out: str, seconds: float, stored_in: Optional[str] = None) -> bool:
    """Print the 80-column summary (stdout), write the full table beside the result file; True if
    the run failed, after a last line naming the jobs that failed it."""
    table = out.removesuffix(".gz").removesuffix(".json") + ".table.txt"
    Path(table).write_text(full_table(rf.results))
    paths = [("full table", table), ("result file", out)] + ([("stored in", stored_in)] if stored_in else [])
    print("\n".join(summary_lines(rf.doc, seconds, paths)))
    verdict = verdict_line(rf.results)
    if verdict:
        print("\n".join(wrap(verdict, 4)))
    return verdict is not None


def options(tier, technique, impl, case, device, reason, timeout, seed, memory_gb=None) -> RunOptions:
    """The run's options from the command line; an unknown tier is refused naming the known ones."""
    if tier not in TIERS:
        raise typer.BadParameter(f"tier must be one of {', '.join(TIERS)}", param_hint="--tier")
    return RunOptions(tier=tier, techniques=technique or [], impls=impl or [], cases=case or [],
                      device=device, reason=reason, timeout_s=timeout, seed=seed, memory_gb=memory_gb)


@app.command("run")
def run_cmd(tier: str = TIER, technique: Optional[list[str]] = TECH, impl: Optional[list[str]] = IMPL,
            case: Optional[list[str]] = CASE, out: Optional[str] = typer.Option(None, "--out", "-o"),
            device: str = DEVICE, reason: str = REASON, timeout: float = TIMEOUT,
            seed: Optional[int] = SEED, memory_limit: Optional[float] = MEMORY,
            repeat: int = REPEAT) -> None:
    """Run a tier and write the result file (no database)."""
    opts = options(tier, technique, impl, case, device, reason, timeout, seed, memory_limit)
    if run_and_report(opts, out, repeat):
        raise typer.Exit(1)


def run_and_report(opts: RunOptions, out: Optional[str], repeat: int = 1,
                   store: Optional[Callable[[str, dict], str]] = None) -> bool:
    """The one `run`: the selection `repeat` times, each written to its result file, handed to
    `store` (path, document) -> where it was stored, and reported; True when a single run failed
    (repeated runs measure noise: their failures are reported, not fatal)."""
    if repeat > 1 and not out:
        raise typer.BadParameter("--repeat needs --out (the runs are written as NAME_01, NAME_02, ...)",
                                 param_hint="--repeat")
    failed = False
    for i in range(1, repeat + 1):
        path = numbered(out, i) if repeat > 1 else (out or default_out(opts.tier))
        if repeat > 1:
            console.print(f"[bold]run {i} of {repeat}[/bold] -> {path}")
        t0 = time.monotonic()
        try:
            rf = run_with_progress(opts, path)
        except KeyError as exc:
            raise typer.BadParameter(str(exc.args[0]))
        except (KeyboardInterrupt, SystemExit) as exc:  # Ctrl-C, or SIGTERM (run_with_progress)
            keep_partial(path, store)
            raise typer.Exit(exc.code if isinstance(exc, SystemExit) and isinstance(exc.code, int) else 130)
        stored_in = store(path, rf.doc) if store else None
        failed |= report(rf, path, time.monotonic() - t0, stored_in)
    return failed and repeat == 1


def keep_partial(path: str, store: Optional[Callable[[str, dict], str]]) -> None:
    """After an interrupted run: say where its finished jobs are and store them as an incomplete run."""
    from runners.resultfile import load

    try:
        doc = load(path)
    except (OSError, ValueError):
        console.print(f"interrupted before the result file {path} was written: nothing kept", markup=False, soft_wrap=True)
        return
    n = len(doc.get("results") or [])
    if n == 0:
        console.print(f"interrupted before any job finished: {path} holds the run without results; nothing "
                      "stored", markup=False, soft_wrap=True)
        return
    kept = f"interrupted: the {n} results of the jobs that finished are in {path}"
    if store is not None:
        try:
            console.print(f"{kept}, stored as an incomplete run in {store(path, doc)}", markup=False, soft_wrap=True)
            return
        except Exception as exc:  # the database is away: the file is the record
            kept += f" (not stored: {type(exc).__name__})"
    console.print(f"{kept}; `kwatch ingest {path}` stores them as an incomplete run", markup=False, soft_wrap=True)


def numbered(path: str, i: int) -> str:
    """rep.json.gz, 3 -> rep_03.json.gz (the number goes before .json / .json.gz)."""
    for ext in (".json.gz", ".json"):
        if path.endswith(ext):
            return f"{path[:-len(ext)]}_{i:02d}{ext}"
    return f"{path}_{i:02d}"


app.command("estimate")(budget_cli.estimate_cmd)
app.command("export-trees")(tree_cli.export_cmd)
app.command("backfill")(tree_cli.backfill_cmd)
app.command("ab")(tree_cli.ab_cmd)
