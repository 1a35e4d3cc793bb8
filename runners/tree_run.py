"""Run inside an exported tree (runners.trees): that commit's suite/ measured by the current runners.

`python -m runners.tree_run SPEC_JSON`, started with the tree as working directory. SPEC holds
"tier", "techniques", "impls", "cases", "device", "timeout_s", "seed", "out" and, for an A/B run,
"base_tree", "base_out", "rounds". Names the commit does not have are dropped and listed in the run's
config (`selection_missing`); a commit whose suite cannot be imported or planned exits with code 3.
"""
from __future__ import annotations

import json
import os
import sys
import traceback
from pathlib import Path

from runners.ab import execute_ab
from runners.run import RunOptions, execute
from runners.trees import read_info

IMPORT_FAILED = 3


def git_of(tree: Path) -> dict:
    """The run's git header for an exported tree: its commit and date, clean by construction."""
    info = read_info(tree)
    return {"commit": info["commit"], "branch": info.get("ref"), "dirty": False, "date": info["date"]}


def available(spec: dict) -> tuple[RunOptions, dict]:
    """RunOptions over the names this tree's suite has, and the names it lacks."""
    # The tree's own suite, imported here so that a commit whose suite does not import exits with 3.
    from suite.registry import techniques

    known = techniques()
    techs = [t for t in spec["techniques"] if t in known] or ([] if spec["techniques"] else list(known))
    impls = {i.name for t in techs for i in known[t].impls}
    cases = {c.id for t in techs for c in known[t].cases}
    missing = {"techniques": [t for t in spec["techniques"] if t not in known],
               "impls": [i for i in spec["impls"] if i not in impls],
               "cases": [c for c in spec["cases"] if c not in cases]}
    if spec["techniques"] and not techs:
        raise KeyError(f"none of the techniques {spec['techniques']} exists at this commit")
    opts = RunOptions(tier=spec["tier"], techniques=techs, impls=[i for i in spec["impls"] if i in impls],
                      cases=[c for c in spec["cases"] if c in cases], device=spec["device"], reason="backfill",
                      timeout_s=spec["timeout_s"], seed=spec.get("seed"))
    return opts, missing


def selection(spec: dict) -> dict:
    """What a backfill asked for (a commit counts as measured for exactly this selection)."""
    return {k: spec[k] for k in ("tier", "techniques", "impls", "cases", "device")}


def main(spec: dict) -> None:
    tree = Path.cwd()
    git = git_of(tree)
    os.environ.update(KWATCH_GIT_COMMIT=git["commit"], KWATCH_GIT_BRANCH=git["branch"] or "",
                      KWATCH_GIT_DIRTY="0", KWATCH_GIT_DATE=git["date"])
    try:
        opts, missing = available(spec)
        if spec.get("base_tree"):

            base = Path(spec["base_tree"])
            files = execute_ab(opts, (base, git_of(base)), (tree, git), (Path(spec["base_out"]), Path(spec["out"])),
                               spec.get("rounds", 2))
        else:
            files = (execute(opts, spec["out"]),)
    except Exception as exc:  # this commit's code cannot be imported or planned by the current runner
        print(f"{type(exc).__name__}: {exc}\n{''.join(traceback.format_exc()[-1500:])}", file=sys.stderr)
        sys.exit(IMPORT_FAILED)
    for rf in files:
        rf.doc["run"]["config"]["selection_missing"] = missing
        if not spec.get("base_tree"):
            rf.doc["run"]["config"]["backfill"] = {"status": "measured", "selection": selection(spec)}
        rf.flush(final=True)


if __name__ == "__main__":
    main(json.loads(sys.argv[1]))
