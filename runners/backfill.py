"""Backfill (asv-style): each exported tree's selection run by its own code in a fresh process, one
result file per commit; a commit whose code fails to import is written as a run with no results whose
config says why (so it is recorded, and skipped next time like a measured one)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from runners.env import fingerprint
from runners.resultfile import ResultFile, new_run
from runners.sandbox import isolated, job_env
from runners.tree_run import IMPORT_FAILED, git_of, selection
from runners.trees import read_info


def spec_of(tier: str, techniques, impls, cases, device: str, timeout_s: float, seed=None) -> dict:
    """The selection and settings a tree run gets (JSON for runners.tree_run)."""
    return {"tier": tier, "techniques": list(techniques or []), "impls": list(impls or []),
            "cases": list(cases or []), "device": device, "timeout_s": timeout_s, "seed": seed}


def out_name(tree: Path) -> str:
    """backfill_<commit date>_<commit[:12]>.json.gz: file names sort by commit date."""
    info = read_info(tree)
    return f"backfill_{info['date'][:19].replace(':', '').replace('-', '')}_{info['commit'][:12]}.json.gz"


def run_in_tree(tree: Path, spec: dict, env_extra: dict | None = None) -> subprocess.CompletedProcess:
    """runners.tree_run in the tree's own directory, with the minimal environment of code under test."""
    env = job_env(PYTHONPATH=str(tree), PYTHONUNBUFFERED="1", **(env_extra or {}))
    if spec["device"] == "cpu":
        env["TRITON_INTERPRET"] = "1"
    return subprocess.run(isolated([sys.executable, "-m", "runners.tree_run", json.dumps(spec)]), cwd=tree, env=env,
                          stdout=sys.stderr, stderr=subprocess.PIPE, text=True)


def record_failure(tree: Path, spec: dict, out: Path, error: str) -> None:
    """A run with no results whose config.backfill says the commit's code could not be run."""
    run = new_run(spec["tier"], "backfill", git_of(tree), fingerprint(spec["device"]),
                  {"techniques": spec["techniques"], "impls": spec["impls"], "cases": spec["cases"],
                   "device": spec["device"], "backfill": {"status": "import_failed", "error": error[-2000:],
                                "selection": selection(spec)}})
    ResultFile(out, run).finish()


def backfill_tree(tree: Path, spec: dict, out_dir: Path) -> tuple[Path, str]:
    """Run one tree; (result file, "measured" | "import_failed" | "failed: ...")."""
    out = Path(out_dir) / out_name(tree)
    out.unlink(missing_ok=True)
    proc = run_in_tree(tree, {**spec, "out": str(out.resolve())})
    if proc.returncode == IMPORT_FAILED or not out.exists():
        record_failure(tree, spec, out, proc.stderr or f"exit code {proc.returncode}")
        return out, "import_failed"
    return out, "measured"


def run_ab(base: Path, head: Path, spec: dict, outs: tuple[Path, Path], rounds: int) -> subprocess.CompletedProcess:
    """base and head trees measured interleaved by runners.tree_run in the head tree: outs (base, head)."""
    outs[0].parent.mkdir(parents=True, exist_ok=True)
    spec = {**spec, "base_tree": str(Path(base).resolve()), "base_out": str(outs[0].resolve()),
            "out": str(outs[1].resolve()), "rounds": rounds}
    return run_in_tree(Path(head).resolve(), spec)
