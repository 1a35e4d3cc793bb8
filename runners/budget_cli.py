"""`kwatch estimate`: a tier's wall time on one GPU from the job times of earlier result files."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.table import Table

from runners.budget import estimate, recorded_times, result_files
from runners.cli_options import CASE, IMPL, TECH
from suite.spec import NIGHTLY_BUDGET_S
from runners.run import RunOptions, plan
from suite.spec import TIERS

DEFAULT_FROM = ["results/h200"]


def estimate_cmd(tier: str = typer.Option("nightly", "--tier", help="smoke | smoke_full | nightly | full"),
                 technique: Optional[list[str]] = TECH, impl: Optional[list[str]] = IMPL,
                 case: Optional[list[str]] = CASE,
                 sources: Optional[list[str]] = typer.Option(None, "--from", help="result files, folders or "
                                                             "globs (repeatable; default results/h200)"),
                 gpu: str = typer.Option("NVIDIA H200", "--gpu", help="the GPU name runs recorded"),
                 budget: Optional[float] = typer.Option(None, "--budget", help="seconds; exit 1 when the "
                                                        "estimate is over (default: 600 for the nightly tier)"),
                 show_jobs: int = typer.Option(10, "--jobs", help="list the N slowest jobs")) -> None:
    """Estimate how long a tier takes on one GPU, technique by technique; exit 1 over the budget."""
    if tier not in TIERS:
        raise typer.BadParameter(f"tier must be one of {', '.join(TIERS)}", param_hint="--tier")
    try:
        jobs = plan(RunOptions(tier=tier, techniques=technique or [], impls=impl or [], cases=case or [],
                               device="cuda"))
    except KeyError as exc:
        raise typer.BadParameter(str(exc.args[0]))
    files = result_files(sources or DEFAULT_FROM)
    if not files:
        raise typer.BadParameter(f"no result files under {', '.join(sources or DEFAULT_FROM)}", param_hint="--from")
    unreadable: list[str] = []
    times = recorded_times(files, gpu, unreadable=unreadable)
    for path in unreadable:
        print(f"skipped, unreadable: {path}")
    if not times:
        raise typer.BadParameter(f"none of the {len(files)} files holds a run on {gpu!r} under the current "
                                 "timing protocol", param_hint="--gpu")
    est = estimate(jobs, times, gpu, files)
    out = Console()
    t = Table(title=f"{tier} tier on one {gpu}: {len(jobs)} jobs, from {len(files)} files", title_justify="left")
    for col in ("technique", "jobs", "seconds", "guessed"):
        t.add_column(col, justify="left" if col == "technique" else "right")
    guessed = {}
    for j in est.guessed:
        guessed[j.technique] = guessed.get(j.technique, 0) + 1
    for name, (n, s) in est.by_technique().items():
        t.add_row(name, str(n), f"{s:.1f}", str(guessed.get(name, "")))
    t.add_row("run overhead", "", f"{est.overhead_s:.1f}", "")
    t.add_row("result file rewrites, at most", "", f"{est.rewrites_s:.1f}", "")
    out.print(t)
    for j in sorted(est.jobs, key=lambda j: -j.seconds)[:show_jobs]:
        print(f"  {j.seconds:6.1f} s  {j.technique}/{j.impl}/{j.case}"
                  f"  {'(guessed)' if j.guessed else Path(j.source).name}")
    limit = budget if budget is not None else (NIGHTLY_BUDGET_S if tier == "nightly" else None)
    over = limit is not None and est.total_s > limit
    print(f"estimated {est.total_s:.0f} s ({est.total_s / 60:.1f} min)"
              + (f" against a budget of {limit:.0f} s: {'OVER' if over else 'within'}" if limit else "")
              + (f"; {len(est.guessed)} jobs never recorded on this GPU, guessed" if est.guessed else ""))
    if over:
        raise typer.Exit(1)
