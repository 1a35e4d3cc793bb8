"""`kwatch grade`: KernelBench-format problems and solutions, correctness then speedup, fast_p; stored as a run.

The pairs run through the runner (runners.kernelbench builds a technique of them: each problem a
case, its Model and the solution set the implementations): the runner's correctness check on fresh
seeds, its timing protocol and its result rows. A solution that fails is not timed, nor is its reference.

fast_p (KernelBench, Ouyang et al. 2025): the fraction of problems whose solution is correct AND more
than p times faster than the reference; fast_0 is the fraction correct.

Untrusted solutions: each problem runs in a fresh worker process with the minimal environment of
runners.sandbox (no database URL, no tokens or other credentials), a wall-time limit per job (--timeout)
and a resident-memory limit (--memory-limit); only this parent process writes to the database. The
measuring boundary (runners/guard*.py, docs/DESIGN.md "The measuring boundary") refuses the known ways
of forging a grade: replayed or lazy results (a fresh-value audit after timing), a replaced timer,
statistic or reference model (a snapshot verified around every batch), work hidden from the CUDA
events (the wall clock), persisting L2, and times beyond the machine (time floors). Not isolated: the
process runs as the same user, so it can read and write what that user can (a SQLite database file,
~/.pgpass, the repository), open network connections, and use the whole GPU; and it runs in the
grader's interpreter, so a solution written against the grader's own source can still reach it.
Grade code you do not trust inside a disposable container or VM with no network and no credentials.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.table import Table

from db.engine import open_db, resolve_url
from db.ingest import ingest_docs
from db.urls import mask_url
from runners.progress import reporter
from runners.resultfile import finite, result_row
from runners.run import RunOptions, execute
from runners.timing import Protocol

console = Console(stderr=True)
PROTOCOL = Protocol(max_time_s=1.0)


def fast_p(grades: list[dict], p: float) -> float:
    """Share of problems correct and with speedup > p."""
    if not grades:
        return 0.0
    return sum(1 for g in grades if g.get("status") == "ok" and g.get("speedup", 0) > p) / len(grades) if p > 0 else \
        sum(1 for g in grades if g.get("status") == "ok") / len(grades)


def pairs(problem: Path, solution: Optional[Path]) -> tuple[list[Path], Path]:
    """(problem files, solution): two files, or a folder of problems and the folder of their solutions
    of the same names (SOLUTION, default: PROBLEM/solutions or PROBLEM/../solutions)."""
    if problem.is_file():
        if solution is None or not solution.is_file():
            raise typer.BadParameter("grading one problem needs a SOLUTION file")
        return [problem], solution
    sol_dir = solution or next((d for d in (problem / "solutions", problem.parent / "solutions") if d.is_dir()), None)
    if sol_dir is None:
        raise typer.BadParameter(f"no solutions folder for {problem}")
    return [f for f in sorted(problem.glob("*.py")) if not f.name.startswith("_")], sol_dir


def grades_of(rows: list[dict], problems: list[Path]) -> list[dict]:
    """Per problem: the solution's status, max abs error, message and speedup (reference median /
    solution median), read from the run's rows."""
    out = []
    for prob in problems:
        mine = [r for r in rows if r["case"] == prob.stem]
        sol = next((r for r in mine if r["impl"] != "reference" and r["metric"] == "latency_ms"), None)
        ref = next((r for r in mine if r["impl"] == "reference" and r["metric"] == "latency_ms"), None)
        err = next((r for r in mine if r["impl"] != "reference" and r["metric"] == "max_abs_err"), None)
        g = {"problem": str(prob), "impl": sol["impl"] if sol else None,
             "status": sol["status"] if sol else "error", "max_abs_err": err["value"] if err else None,
             "message": (sol or {}).get("error") or (err or {}).get("error"),
             "impl_hash": sol["impl_hash"] if sol else None}
        if g["status"] == "ok" and ref and ref["status"] == "ok" and sol["value"]:
            g["speedup"] = ref["value"] / sol["value"]
        out.append(g)
    return out


def speedup_rows(suite: str, grades: list[dict]) -> list[dict]:
    """One `speedup` row per problem whose solution and reference were both timed."""
    return [result_row(suite, g["impl"], Path(g["problem"]).stem, "speedup", "x", "higher", value=g["speedup"],
                       impl_hash=g["impl_hash"]) for g in grades if g.get("speedup")]


def grade(problems: list[Path], solution: Path, suite: str, trials: int, device: str, seed: int,
          timeout: float, memory_gb: Optional[float], ps: list[float]) -> tuple[dict, list[dict]]:
    """Run the pairs through the runner; (the schema-1 document of the grading, per-problem grades)."""
    source = {"target": "runners.kernelbench:technique",
              "args": {"name": suite, "problems": [str(p.resolve()) for p in problems],
                       "solution": str(solution.resolve()), "trials": trials}}
    opts = RunOptions(tier="full", device=device, reason="grade", timeout_s=timeout, memory_gb=memory_gb,
                      seed=seed, protocol=PROTOCOL, source=source, isolate_cases=True)

    def solution_passed(tech, impl, case, rows) -> bool:  # correct first: no reference timed for a failure
        return impl.name != "reference" or any(
            r["case"] == case.id and r["impl"] != "reference" and r["status"] == "ok" for r in rows)

    with reporter() as progress:
        doc = execute(opts, progress=progress, wanted=solution_passed).doc
    grades = grades_of(doc["results"], problems)
    doc["results"] += speedup_rows(suite, grades)
    doc["run"].update(tier="kernelbench")
    doc["run"]["config"].update(suite=suite, problems=len(problems),
                                fast_p={str(p): fast_p(grades, p) for p in ps})
    return finite(doc), grades


def grade_cmd(problem: Path = typer.Argument(..., help="problem file, or a folder of problems"),
              solution: Optional[Path] = typer.Argument(None, help="solution file, or a folder of solutions"),
              trials: int = typer.Option(5, "--trials", help="correctness trials (fresh inputs each)"),
              device: str = typer.Option("auto", "--device"), seed: int = typer.Option(42, "--seed"),
              p: list[float] = typer.Option([0.0, 1.0, 2.0], "--p", help="fast_p thresholds"),
              timeout: float = typer.Option(600.0, "--timeout", help="seconds per job (a check and timing)"),
              memory_limit: Optional[float] = typer.Option(None, "--memory-limit", help="GiB of resident memory "
                                                           "per worker (default: half of this host's memory)"),
              out: Optional[Path] = typer.Option(None, "--out", help="write the result file here"),
              db: Optional[str] = typer.Option(None, "--db"), no_db: bool = typer.Option(False, "--no-db")) -> None:
    """Grade KernelBench-format solutions: correctness over trials, then speedup; fast_p over a folder."""
    problems, sol = pairs(problem, solution)
    suite = f"kernelbench:{problem.stem if problem.is_file() else problem.name}"
    doc, grades = grade(problems, sol, suite, trials, device, seed, timeout, memory_limit, p)
    t = Table(title=f"KernelBench grading on {doc['run']['config']['device']}")
    for col in ("problem", "status", "speedup", "max abs err", "message"):
        t.add_column(col)
    for g in grades:
        t.add_row(Path(g["problem"]).name, g["status"], f"{g['speedup']:.2f}x" if g.get("speedup") else "",
                  f"{g['max_abs_err']:.2e}" if g.get("max_abs_err") is not None else "",
                  (g.get("message") or "").splitlines()[0][:60] if g.get("message") else "")
    Console().print(t)
    for k, v in doc["run"]["config"]["fast_p"].items():
        print(f"fast_{k} = {v:.3f}")
    if out:
        out.write_text(json.dumps(doc))
    if not no_db:
        [o] = ingest_docs(open_db(db), [(str(out or "grade"), doc)], source="kernelbench")
        console.print(f"stored run {o.run_id} ({o.results} results) in {mask_url(resolve_url(db))}")
