"""Identical kernels on two hosts (docs/verdict.md, "Identical kernels on two hosts"): every pair of committed
nightlies of one GPU and software stack that ran on different machines, gated both ways with the spreads learned
from every committed run of that folder but the candidate; a blocking series of unchanged code fails the pair.

kwatch host-pairs results/h200 [--json pairs.json]   (or python -m ci.host_pairs)
"""
from __future__ import annotations

import argparse
import itertools
import json
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Optional

import typer

from ci.gate import run_gate
from ci.gate_refs import RunData, resolve
from db.spread_history import builder_of
from db.verdict import Thresholds
from db.verdict.identity import other_host, same_judged

PATTERN = "nightly_v4_*.json.gz"


@dataclass
class Pair:
    """One unordered pair of runs on two machines, gated both ways."""

    a: str  # result file names
    b: str
    commit_a: str
    commit_b: str
    hosts: str  # how the machines differ
    unchanged_blocking: list[str] = field(default_factory=list)  # series of unchanged code that blocked
    changed_blocking: list[str] = field(default_factory=list)  # series of changed code that blocked (expected)
    other_machine: int = 0  # series judged "another machine" (ambiguous), summed over both directions
    changed_impls: int = 0  # (technique, impl) whose code differs between the two runs
    vanished: int = 0  # series one side lacks (an extract, or a run stopped part-way), both directions

    @property
    def same_commit(self) -> bool:
        return self.commit_a == self.commit_b

    @property
    def passed(self) -> bool:
        """Identical kernels pass: no series of unchanged code blocks in either direction (series that one side
        lacks are counted apart: a partial run is not a difference between hosts)."""
        return not self.unchanged_blocking


def _hashes(run: RunData) -> dict[tuple[str, str], frozenset]:
    out: dict[tuple[str, str], set] = {}
    for r in run.rows:
        out.setdefault((r["technique"], r["impl"]), set()).add(r.get("impl_hash"))
    return {k: frozenset(v) for k, v in out.items()}


def _commit(run: RunData) -> str:
    return ((run.run.get("git") or {}).get("commit") or "?")[:7]


def gate_pairs(paths: list[Path], spread_folder: Path, progress=None) -> list[Pair]:
    """Every pair of runs (result files) of one judged GPU and software that ran on two machines, gated both ways."""
    builder, _ = builder_of([spread_folder])
    runs = [(p, resolve(str(p))) for p in paths]
    hashes = {p: _hashes(r) for p, r in runs}
    out = []
    for (pa, ra), (pb, rb) in itertools.combinations(runs, 2):
        env_a, env_b = ra.run.get("env") or {}, rb.run.get("env") or {}
        hosts = other_host(env_a, env_b)
        if not hosts or not same_judged(env_a, env_b):
            continue
        ha, hb = hashes[pa], hashes[pb]
        changed = {k for k in ha.keys() & hb.keys() if ha[k] != hb[k]}
        pair = Pair(pa.name, pb.name, _commit(ra), _commit(rb), hosts, changed_impls=len(changed))
        for base, cand in ((ra, rb), (rb, ra)):
            r = run_gate(base, cand, Thresholds(spreads=builder.table("held out", {cand.run_id})))
            for v in r.verdicts:
                label = f"{v.key.label()} ({'a->b' if base is ra else 'b->a'}, {v.reason[:80]})"
                if v.blocking:
                    changed_code = (v.key.technique, v.key.impl) in changed
                    (pair.changed_blocking if changed_code else pair.unchanged_blocking).append(label)
                pair.other_machine += bool(v.ambiguous and v.reason.startswith("another machine"))
            pair.vanished += len(r.vanished)
        out.append(pair)
        if progress:
            progress(pair)
    return out


def _line(p: Pair) -> str:
    verdict = "pass" if p.passed else f"FAIL ({len(p.unchanged_blocking)} series of unchanged code block)"
    kind = "one commit" if p.same_commit else f"{p.changed_impls} impls changed"
    part = f"; {p.vanished} series one side lacks (partial run)" if p.vanished else ""
    return (f"{p.a} <-> {p.b}  [{kind}]  {verdict}; {len(p.changed_blocking)} series of changed code block; "
            f"{p.other_machine} 'another machine'{part}; hosts: {p.hosts}")


def main(argv=None) -> int:
    """The command line: a line per pair, the tally, JSON to --json; exit 1 when any pair fails."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", type=Path, help="a folder of one GPU kind's committed runs (results/h200)")
    ap.add_argument("--glob", default=PATTERN, help=f"which result files are nightlies (default {PATTERN})")
    ap.add_argument("--json", type=Path, default=None)
    a = ap.parse_args(argv)
    paths = sorted(a.folder.glob(a.glob))
    if len(paths) < 2:
        print(f"host_pairs: fewer than two result files match {a.folder}/{a.glob}", file=sys.stderr)
        return 2
    pairs = gate_pairs(paths, a.folder, progress=lambda p: print(_line(p), flush=True))
    for p in pairs:
        for s in p.unchanged_blocking:
            print(f"  blocks: {s}")
    one = [p for p in pairs if p.same_commit]
    print(f"{sum(p.passed for p in pairs)} of {len(pairs)} pairs on two machines pass "
          f"({sum(p.passed for p in one)} of {len(one)} pairs of one commit)")
    if a.json:
        a.json.write_text(json.dumps([asdict(p) | {"passed": p.passed, "same_commit": p.same_commit}
                                      for p in pairs], indent=1) + "\n")
    return 0 if all(p.passed for p in pairs) else 1


def host_pairs_cmd(folder: Path = typer.Argument(..., help="a folder of one GPU kind's committed runs"),
                   glob: str = typer.Option(PATTERN, "--glob", help="which result files are nightlies"),
                   json_out: Optional[Path] = typer.Option(None, "--json", help="write the pairs as JSON")) -> None:
    """Identical kernels on two hosts: every pair of nightlies on two machines, gated both ways; exit 1 when a
    series of unchanged code blocks."""
    raise typer.Exit(main([str(folder), "--glob", glob] + (["--json", str(json_out)] if json_out else [])))


if __name__ == "__main__":
    raise SystemExit(main())
