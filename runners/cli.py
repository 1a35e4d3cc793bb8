"""`python -m runners`: list and run techniques without a database (for bare GPU hosts)."""
from __future__ import annotations

from typing import Optional

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from runners.run import RunOptions, execute

console = Console(stderr=True)
app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_show_locals=False,
                  help="KernelWatch runners.")


@app.command("list")
def list_cmd(technique: Optional[str] = typer.Option(None, "--technique", "-t"),
             tier: Optional[str] = typer.Option(None, "--tier")) -> None:
    """List techniques, implementations and cases."""
    from suite.registry import get, techniques

    techs = [get(technique)] if technique else list(techniques().values())
    out = Console()
    for tech in techs:
        t = Table(title=f"{tech.name} — {tech.section}", title_justify="left")
        t.add_column("kind"), t.add_column("name"), t.add_column("detail")
        for impl in tech.impls:
            t.add_row("impl", impl.name, f"v{impl.version} {impl.accuracy} "
                      f"{'baseline ' if impl.baseline else ''}{' '.join(impl.requires)}".strip())
        for case in (tech.cases_for(tier) if tier else tech.cases):
            t.add_row("case", case.id, f"{','.join(case.tiers)} {case.params}")
        out.print(t)


def run_with_progress(opts: RunOptions, out: Optional[str]):
    """Execute with a progress bar on stderr; returns the ResultFile."""
    with Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=console, transient=False) as bar:
        task = bar.add_task("planning", total=None)

        def progress(done: int, total: int, label: str) -> None:
            bar.update(task, completed=done, total=total, description=label)

        return execute(opts, out, progress=progress)


def summary_table(results: list[dict]) -> Table:
    """One line per (technique, impl, case): status, latency, throughput, error."""
    rows: dict[tuple, dict] = {}
    for r in results:
        key = (r["technique"], r["impl"], r["case"])
        d = rows.setdefault(key, {"status": r["status"], "error": r["error"]})
        if r["status"] != "ok":
            d["status"], d["error"] = r["status"], r["error"]
        d[r["metric"]] = r["value"]
    t = Table(title="KernelWatch run")
    for col in ("technique", "impl", "case", "status", "latency_ms", "tflops", "rel_err"):
        t.add_column(col, justify="right" if col in ("latency_ms", "tflops", "rel_err") else "left")
    colour = {"ok": "green", "failed_correctness": "red", "error": "red", "skipped": "yellow"}
    for (tech, impl, case), d in rows.items():
        fmt = lambda v, f: "" if v is None else format(v, f)
        t.add_row(tech, impl, case, f"[{colour.get(d['status'], 'white')}]{d['status']}",
                  fmt(d.get("latency_ms"), ".4g"), fmt(d.get("tflops"), ".4g"), fmt(d.get("rel_err"), ".2e"))
    return t


def options(tier, technique, impl, case, device, reason, timeout, seed, memory_gb=None) -> RunOptions:
    from suite.spec import TIERS

    if tier not in TIERS:
        raise typer.BadParameter(f"tier must be one of {', '.join(TIERS)}", param_hint="--tier")
    return RunOptions(tier=tier, techniques=technique or [], impls=impl or [], cases=case or [],
                      device=device, reason=reason, timeout_s=timeout, seed=seed, memory_gb=memory_gb)


TIER = typer.Option("smoke", "--tier", help="smoke | nightly | full")
TECH = typer.Option(None, "--technique", "-t", help="repeatable")
IMPL = typer.Option(None, "--impl", "-i", help="repeatable")
CASE = typer.Option(None, "--case", "-c", help="repeatable")
DEVICE = typer.Option("auto", "--device", help="auto | cuda | cpu")
REASON = typer.Option("manual", "--reason", help="manual | nightly | pr | ...")
TIMEOUT = typer.Option(600.0, "--timeout", help="seconds per job before it is killed")
SEED = typer.Option(None, "--seed", help="base seed (default: random, recorded)")
MEMORY = typer.Option(None, "--memory-limit", help="GiB of resident memory per job before it is killed "
                      "(default: half of this host's memory)")


@app.command("run")
def run_cmd(tier: str = TIER, technique: Optional[list[str]] = TECH, impl: Optional[list[str]] = IMPL,
            case: Optional[list[str]] = CASE, out: Optional[str] = typer.Option(None, "--out", "-o"),
            device: str = DEVICE, reason: str = REASON, timeout: float = TIMEOUT,
            seed: Optional[int] = SEED, memory_limit: Optional[float] = MEMORY,
            repeat: int = typer.Option(1, "--repeat", min=1, help="run the selection N times back to back, one "
                                       "result file each (run-to-run noise for `kwatch detect-bench --runs`)")) -> None:
    """Run a tier and write the result file (no database)."""
    opts = options(tier, technique, impl, case, device, reason, timeout, seed, memory_limit)
    if repeat > 1 and not out:
        raise typer.BadParameter("--repeat needs --out (the runs are written as NAME_01, NAME_02, ...)",
                                 param_hint="--repeat")
    for i in range(1, repeat + 1):
        path = numbered(out, i) if repeat > 1 else out
        if repeat > 1:
            console.print(f"[bold]run {i} of {repeat}[/bold] -> {path}")
        try:
            rf = run_with_progress(opts, path)
        except KeyError as exc:
            raise typer.BadParameter(str(exc.args[0]))
        Console().print(summary_table(rf.results))
        if path:
            console.print(f"wrote {len(rf.results)} results to {path}")


def numbered(path: str, i: int) -> str:
    """rep.json.gz, 3 -> rep_03.json.gz (the number goes before .json / .json.gz)."""
    for ext in (".json.gz", ".json"):
        if path.endswith(ext):
            return f"{path[:-len(ext)]}_{i:02d}{ext}"
    return f"{path}_{i:02d}"
