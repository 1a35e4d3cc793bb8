"""`kwatch grade`: KernelBench-format problems and solutions, correctness then speedup, fast_p; stored as a run.

fast_p (KernelBench, Ouyang et al. 2025): the fraction of problems whose solution is correct AND more
than p times faster than the reference; fast_0 is the fraction correct.

Untrusted solutions: each pair runs in its own process with the minimal environment of
runners.sandbox (no database URL, no tokens or other credentials), a wall-time limit (--timeout) and
a resident-memory limit (--memory-limit); only this parent process writes to the database. Not
isolated: the process runs as the same user, so it can read and write what that user can (a SQLite
database file, ~/.pgpass, the repository), open network connections, and use the whole GPU; and it
runs in the grader's interpreter, so a hostile solution can forge its own grade (patch torch, print
a result line). Grade code you do not trust inside a disposable container or VM with no network and
no credentials.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.table import Table

from db.urls import mask_url
from runners.env import fingerprint, git_state
from runners.resultfile import finite, new_run, result_row
from runners.sandbox import default_memory_limit, job_env, run_limited

console = Console(stderr=True)
ROOT = Path(__file__).resolve().parent.parent


def fast_p(grades: list[dict], p: float) -> float:
    """Share of problems correct and with speedup > p."""
    if not grades:
        return 0.0
    return sum(1 for g in grades if g.get("status") == "ok" and g.get("speedup", 0) > p) / len(grades) if p > 0 else \
        sum(1 for g in grades if g.get("status") == "ok") / len(grades)


def run_pair(problem: Path, solution: Path, trials: int, device: str, seed: int, timeout: float,
             memory_limit: int | None = None) -> dict:
    """Grade one pair in a fresh Python process with the minimal environment of runners.sandbox (no
    database URL, no tokens), a time and a memory limit; a crash, hang or memory hog is an error."""
    cmd = [sys.executable, "-m", "ci.grade_pair", str(problem), str(solution), str(trials), device, str(seed)]
    env = job_env(PYTHONPATH=str(ROOT))
    code, stdout, stderr, why = run_limited(cmd, timeout, memory_limit or default_memory_limit(), ROOT, env)
    failed = {"problem": str(problem), "solution": str(solution), "status": "error", "correct": False}
    if why:
        return {**failed, "message": why}
    line = next((ln for ln in stdout.splitlines() if ln.startswith("KWGRADE")), None)
    if line is None:
        return {**failed, "message": f"exit code {code}: {stderr[-800:]}"}
    return json.loads(line[len("KWGRADE"):])


def pairs(problem: Path, solution: Optional[Path]) -> list[tuple[Path, Path]]:
    """(problem, solution) pairs: two files, or a folder of problems with solutions of the same name
    in SOLUTION (default: PROBLEM/../solutions or PROBLEM/solutions)."""
    if problem.is_file():
        if solution is None or not solution.is_file():
            raise typer.BadParameter("grading one problem needs a SOLUTION file")
        return [(problem, solution)]
    sol_dir = solution or next((d for d in (problem / "solutions", problem.parent / "solutions") if d.is_dir()), None)
    if sol_dir is None:
        raise typer.BadParameter(f"no solutions folder for {problem}")
    out = []
    for f in sorted(problem.glob("*.py")):
        if f.name.startswith("_"):
            continue
        out.append((f, sol_dir / f.name))
    return out


def to_document(grades: list[dict], device: str, ps: list[float], suite: str) -> dict:
    """The grades as a schema-1 result document: reference and solution latency, speedup, max error."""
    run = new_run("kernelbench", "grade", git_state(str(ROOT)), fingerprint(device),
                  {"suite": suite, "fast_p": {str(p): fast_p(grades, p) for p in ps}, "problems": len(grades)})
    rows = []
    for g in grades:
        case = Path(g["problem"]).stem
        status = g.get("status", "error")
        sol = Path(g["solution"]).parent.name + "/" + Path(g["solution"]).stem
        if status == "ok":
            rows.append(result_row(suite, "reference", case, "latency_ms", "ms", "lower",
                                   value=g["ref_stats"]["median"], samples=g["ref_samples"], stats=g["ref_stats"]))
            rows.append(result_row(suite, sol, case, "latency_ms", "ms", "lower", value=g["new_stats"]["median"],
                                   samples=g["new_samples"], stats=g["new_stats"]))
            rows.append(result_row(suite, sol, case, "speedup", "x", "higher", value=g["speedup"]))
        else:
            rows.append(result_row(suite, sol, case, "latency_ms", "ms", "lower", status=status,
                                   error=g.get("message")))
        rows.append(result_row(suite, sol, case, "max_abs_err", "1", "lower", value=g.get("max_abs_err"),
                               status=status, error=g.get("message"),
                               stats={"tolerance_atol": 1e-2, "tolerance_rtol": 1e-2, "trials": g.get("trials")}))
    rows = [r for r in rows if not (r["status"] == "ok" and r["value"] is None)]
    return finite({"schema": 1, "run": run, "results": rows})


def grade_cmd(problem: Path = typer.Argument(..., help="problem file, or a folder of problems"),
              solution: Optional[Path] = typer.Argument(None, help="solution file, or a folder of solutions"),
              trials: int = typer.Option(5, "--trials", help="correctness trials (fresh inputs each)"),
              device: str = typer.Option("auto", "--device"), seed: int = typer.Option(42, "--seed"),
              p: list[float] = typer.Option([0.0, 1.0, 2.0], "--p", help="fast_p thresholds"),
              timeout: float = typer.Option(600.0, "--timeout", help="seconds per pair"),
              memory_limit: Optional[float] = typer.Option(None, "--memory-limit", help="GiB of resident memory "
                                                           "per pair (default: half of this host's memory)"),
              out: Optional[Path] = typer.Option(None, "--out", help="write the result file here"),
              db: Optional[str] = typer.Option(None, "--db"), no_db: bool = typer.Option(False, "--no-db")) -> None:
    """Grade KernelBench-format solutions: correctness over trials, then speedup; fast_p over a folder."""
    if device == "auto":
        import torch

        device = "cuda" if torch.cuda.is_available() else "cpu"
    grades = []
    todo = pairs(problem, solution)
    for i, (prob, sol) in enumerate(todo):
        console.print(f"[{i + 1}/{len(todo)}] {prob.name} ...")
        if not sol.is_file():
            grades.append({"problem": str(prob), "solution": str(sol), "status": "error", "correct": False,
                           "message": "no solution file"})
            continue
        grades.append(run_pair(prob, sol, trials, device, seed, timeout,
                               int(memory_limit * 2**30) if memory_limit else None))
    suite = f"kernelbench:{problem.stem if problem.is_file() else problem.name}"
    doc = to_document(grades, device, p, suite)
    t = Table(title=f"KernelBench grading on {device}")
    for col in ("problem", "status", "speedup", "max abs err", "message"):
        t.add_column(col)
    for g in grades:
        t.add_row(Path(g["problem"]).name, g.get("status", "error"),
                  f"{g['speedup']:.2f}x" if g.get("speedup") else "", f"{g['max_abs_err']:.2e}"
                  if g.get("max_abs_err") is not None else "", (g.get("message") or "")[:60])
    Console().print(t)
    for k, v in doc["run"]["config"]["fast_p"].items():
        print(f"fast_{k} = {v:.3f}")
    if out:
        out.write_text(json.dumps(doc))
    if not no_db:
        from db.engine import open_db, resolve_url
        from db.ingest import ingest_docs

        [o] = ingest_docs(open_db(db), [(str(out or "grade"), doc)], source="kernelbench")
        console.print(f"stored run {o.run_id} ({o.results} results) in {mask_url(resolve_url(db))}")


def register(app: typer.Typer) -> None:
    app.command("grade")(grade_cmd)
