"""Rewrite result files with timed samples at timer precision, checking that nothing else changes.

    python3 -m runners.compact_results results/            # rewrite in place, report bytes saved
    python3 -m runners.compact_results --check results/    # exit 1 if any file would change

Each file is read, compacted row by row (suite.sample_precision), and written back atomically only if
every row is the same apart from its samples, and every sample holds the same float32 as before.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

from runners.resultfile import UNREADABLE, encode, load
from suite.sample_precision import compact_row, same_at_timer_precision


def result_files(paths: list[str]) -> list[Path]:
    """The .json and .json.gz result files (schema + run + results) under the given files and folders."""
    out: list[Path] = []
    for p in map(Path, paths):
        cands = sorted(p.rglob("*")) if p.is_dir() else [p]
        out += [c for c in cands if c.is_file() and c.name.endswith((".json", ".json.gz"))]
    return out


def compacted(doc: dict) -> dict:
    """doc with every result row compacted; raises ValueError if compaction changed more than samples."""
    rows = doc["results"]
    new = [compact_row(r) for r in rows]
    for i, (a, b) in enumerate(zip(rows, new)):
        if {k: v for k, v in a.items() if k != "samples"} != {k: v for k, v in b.items() if k != "samples"}:
            raise ValueError(f"row {i}: fields other than samples changed")
        if not same_at_timer_precision(a.get("samples") or [], b.get("samples") or []):
            raise ValueError(f"row {i}: a sample changed beyond float32")
    return {**doc, "results": new}


def compact_file(path: Path, write: bool) -> tuple[int, int] | None:
    """(bytes before, bytes after) for a result file, rewriting it if write; None if not a result file."""
    try:
        doc = load(path)
    except UNREADABLE:
        return None
    if not isinstance(doc, dict) or not isinstance(doc.get("results"), list) or "run" not in doc:
        return None
    before = path.stat().st_size
    new = compacted(doc)
    if new == doc:
        return before, before
    data = encode(new, path.name.endswith(".gz"))
    if write and len(data) < before:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".kw-", suffix=".tmp")
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, path.stat().st_mode & 0o777)
        os.replace(tmp, path)
    return before, min(before, len(data))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m runners.compact_results", description=__doc__.split("\n")[0])
    ap.add_argument("paths", nargs="+", help="result files or folders holding them")
    ap.add_argument("--check", action="store_true", help="change nothing; exit 1 if a file would shrink")
    args = ap.parse_args(argv)
    files = result_files(args.paths)
    if not files:
        print(f"no .json or .json.gz files under {' '.join(args.paths)}", file=sys.stderr)
        return 2
    total_before = total_after = changed = 0
    for i, f in enumerate(files, 1):
        got = compact_file(f, write=not args.check)
        if got is None:
            continue
        before, after = got
        total_before, total_after = total_before + before, total_after + after
        if after < before:
            changed += 1
            print(f"[{i}/{len(files)}] {f}: {before / 1e6:.2f} -> {after / 1e6:.2f} MB", flush=True)
    verb = "would shrink" if args.check else "shrank"
    print(f"{changed} of {len(files)} files {verb}: {total_before / 1e6:.1f} -> {total_after / 1e6:.1f} MB")
    return 1 if args.check and changed else 0


if __name__ == "__main__":
    raise SystemExit(main())
