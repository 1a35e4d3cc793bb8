"""Clean source trees of past commits (backfill, A/B): that commit's suite/, today's runners/ over its own.

A tree is a folder DEST/<commit[:12]> holding `git archive` of the commit's suite/ and runners/, the
current runners/ copied over them (the current measuring protocol drives the old kernels; runners.compat
fills what an older spec lacks) and COMMIT.json ({"commit", "date", "subject", "ref"}). Exporting needs git; running a tree does not, so
trees made here can be carried to a GPU host whose checkout has no usable history.
"""
from __future__ import annotations

import io
import json
import shutil
import subprocess
import tarfile
from pathlib import Path

from runners.pool import ROOT

CODE_DIRS = ("suite", "runners")
# suite/ modules today's runners import at module level: a past tree without them gets today's copy.
RUNNER_SUITE_DEPS = ("suite/ceilings.py",)
INFO = "COMMIT.json"


def _git(args: list[str], repo: Path) -> str:
    out = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True)
    if out.returncode != 0:
        raise ValueError(f"git {' '.join(args)}: {out.stderr.strip()}")
    return out.stdout


def repo_of(path: Path) -> Path:
    """The top of the git work tree holding `path` (the repository a user means from a directory)."""
    return Path(_git(["rev-parse", "--show-toplevel"], Path(path)).strip())


def commit_info(ref: str, repo: Path = ROOT) -> dict:
    """{"commit", "date", "subject", "ref"} of one revision (date: committer date, ISO 8601)."""
    sha, date, subject = _git(["show", "-s", "--format=%H%x00%cI%x00%s", f"{ref}^{{commit}}"], repo).split("\0")
    return {"commit": sha, "date": date, "subject": subject.strip(), "ref": ref}


def commits(rev_range: str, every: int = 1, repo: Path = ROOT) -> list[dict]:
    """Commits of REV_RANGE (first-parent line), oldest first, keeping every Nth counted back from the
    newest (so the newest is always measured)."""
    out = _git(["log", "--first-parent", "--reverse", "--format=%H", rev_range], repo)
    shas = out.split()
    kept = shas[::-1][::max(every, 1)][::-1]
    return [{**commit_info(s, repo), "order": n} for n, s in enumerate(kept)]


def export_tree(info: dict, dest: Path, repo: Path = ROOT) -> Path:
    """The clean tree of info["commit"] under dest (reused when already there)."""
    tree = Path(dest) / info["commit"][:12]
    if (tree / INFO).is_file() and json.loads((tree / INFO).read_text())["commit"] == info["commit"]:
        return tree
    tmp = tree.with_name(tree.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    present = [d for d in CODE_DIRS if _git(["ls-tree", "--name-only", info["commit"], d], repo).strip()]
    data = subprocess.run(["git", "archive", "--format=tar", info["commit"], *present], cwd=repo,
                          capture_output=True, check=True).stdout
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        tar.extractall(tmp, filter="data")
    shutil.copytree(ROOT / "runners", tmp / "runners", dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns("__pycache__", "studies"))
    for dep in RUNNER_SUITE_DEPS:
        if not (tmp / dep).exists():
            shutil.copy2(ROOT / dep, tmp / dep)
    init = tmp / "runners" / "__init__.py"  # older specs get the fields today's runners read
    init.write_text(init.read_text() + "\nfrom runners.compat import adapt as _adapt\n\n_adapt()\n")
    (tmp / INFO).write_text(json.dumps(info, indent=1))
    shutil.rmtree(tree, ignore_errors=True)
    tmp.rename(tree)
    return tree


def export(infos: list[dict], dest: Path, repo: Path = ROOT) -> list[Path]:
    """Trees for these commits under dest, in the given order."""
    return [export_tree(i, dest, repo) for i in infos]


def read_info(tree: Path) -> dict:
    """The COMMIT.json of an exported tree."""
    return json.loads((Path(tree) / INFO).read_text())


def listed(trees_dir: Path) -> list[Path]:
    """The exported trees under a folder, oldest commit first."""
    found = [p for p in Path(trees_dir).iterdir() if (p / INFO).is_file()]
    return sorted(found, key=lambda p: (read_info(p).get("order", 0), read_info(p)["date"], p.name))


def find(trees_dir: Path, ref: str) -> Path:
    """The exported tree under trees_dir exported for `ref` (as given to export) or whose commit starts with it."""
    for tree in listed(trees_dir):
        info = read_info(tree)
        if ref in (info.get("ref"), tree.name) or info["commit"].startswith(ref):
            return tree
    raise KeyError(f"no tree for {ref!r} under {trees_dir}")
