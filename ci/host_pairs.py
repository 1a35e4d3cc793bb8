"""Identical kernels on two hosts (docs/verdict.md, "Identical kernels on two hosts"): every pair of nightlies of
one GPU and software stack that ran on different machines, gated both ways with the spreads learned from every
other run; a blocking series of unchanged code fails the pair.

kwatch host-pairs results/h200 [--json pairs.json]     committed result files (or python -m ci.host_pairs)
kwatch host-pairs --db URL [--gpu H200] [--last 8]     a team database's newest nightlies
"""
from __future__ import annotations

import argparse
import itertools
import json
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable

import typer
from sqlalchemy import select
from sqlalchemy.orm import Session

from ci.gate import run_gate
from ci.gate_refs import RunData, from_document, resolve
from db.models import Environment, Run
from db.queries import read_engine
from db.series import run_document
from db.spread_history import builder_from_session, builder_of, has_runs, learned
from db.verdict import Thresholds
from db.verdict.identity import other_host, same_judged
from db.verdict.spread import SpreadTable

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
    """Every pair of runs (result files) of one judged GPU and software that ran on two machines, gated both ways,
    each candidate against the spreads learned from every run of spread_folder but itself."""
    builder, _ = builder_of([spread_folder])
    runs = [(p.name, resolve(str(p))) for p in paths]
    return pairs_of(runs, lambda rid: builder.table("held out", {rid}), progress)


def db_runs(session: Session, tier: str, gpu: str, last: int) -> list[tuple[str, RunData]]:
    """The newest `last` complete runs of a tier on GPUs whose name contains gpu, as (name, RunData), oldest first."""
    q = (select(Run.id, Run.git_commit).join(Environment, Run.environment_id == Environment.id)
         .where(Run.tier == tier, Run.finished_at.is_not(None), Environment.device == "cuda",
                Environment.gpu_name.contains(gpu)).order_by(Run.started_at.desc()).limit(last))
    rows = list(session.execute(q))[::-1]
    return [(f"{rid[:12]} ({(commit or '?')[:7]})", from_document(rid, run_document(session, rid), "database"))
            for rid, commit in rows]


def db_pairs(url: str, tier: str, gpu: str, last: int, progress=None) -> list[Pair]:
    """gate_pairs over a database's newest runs, each candidate against the committed spreads merged with what the
    database teaches without it (as `kwatch gate --db` judges)."""
    if not has_runs(url):
        raise FileNotFoundError(f"no KernelWatch runs stored at {url}")
    with Session(read_engine(url)) as s:
        runs = db_runs(s, tier, gpu, last)
        builder = builder_from_session(s)
    return pairs_of(runs, lambda rid: learned(builder, {rid}), progress)


def pairs_of(runs: list[tuple[str, RunData]], spreads: Callable[[str], SpreadTable], progress=None) -> list[Pair]:
    """Every pair of named runs of one judged GPU and software that ran on two machines, gated both ways, the
    candidate judged against spreads(candidate run id)."""
    hashes = {name: _hashes(r) for name, r in runs}
    out = []
    for (pa, ra), (pb, rb) in itertools.combinations(runs, 2):
        env_a, env_b = ra.run.get("env") or {}, rb.run.get("env") or {}
        hosts = other_host(env_a, env_b)
        if not hosts or not same_judged(env_a, env_b):
            continue
        ha, hb = hashes[pa], hashes[pb]
        changed = {k for k in ha.keys() & hb.keys() if ha[k] != hb[k]}
        pair = Pair(pa, pb, _commit(ra), _commit(rb), hosts, changed_impls=len(changed))
        for base, cand in ((ra, rb), (rb, ra)):
            r = run_gate(base, cand, Thresholds(spreads=spreads(cand.run_id)))
            for v in r.verdicts:
                if v.blocking:
                    label = f"{v.key.label()} ({'a->b' if base is ra else 'b->a'}, {v.reason[:80]})"
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
    ap = argparse.ArgumentParser(prog="kwatch host-pairs", description=__doc__.split("\n\n")[0])
    ap.add_argument("folder", type=Path, nargs="?", help="a folder of one GPU kind's committed runs (results/h200)")
    ap.add_argument("--glob", default=PATTERN, help=f"which result files are nightlies (default {PATTERN})")
    ap.add_argument("--db", default=None, help="a database URL: its newest runs instead of a folder")
    ap.add_argument("--tier", default="nightly", help="with --db: the runs' tier")
    ap.add_argument("--gpu", default="H200", help="with --db: runs on GPUs whose name contains this")
    ap.add_argument("--last", type=int, default=8, help="with --db: the newest this many runs")
    ap.add_argument("--json", type=Path, default=None, help="write the pairs as JSON")
    a = ap.parse_args(argv)
    show = lambda p: print(_line(p), flush=True)  # noqa: E731
    if (a.folder is None) == (a.db is None):
        print("host_pairs: name a folder of result files or --db URL (one of them)", file=sys.stderr)
        return 2
    if a.db is not None:
        try:
            pairs = db_pairs(a.db, a.tier, a.gpu, a.last, progress=show)
        except FileNotFoundError as exc:
            print(f"host_pairs: {exc}", file=sys.stderr)
            return 2
    else:
        paths = sorted(a.folder.glob(a.glob))
        if len(paths) < 2:
            print(f"host_pairs: fewer than two result files match {a.folder}/{a.glob}", file=sys.stderr)
            return 2
        pairs = gate_pairs(paths, a.folder, progress=show)
    if not pairs:
        print("host_pairs: no two runs of one GPU and software stack on two machines", file=sys.stderr)
        return 2
    for p in pairs:
        for s in p.unchanged_blocking:
            print(f"  blocks: {s}")
    one = [p for p in pairs if p.same_commit]
    same_code = [p for p in pairs if not p.changed_impls]
    print(f"{sum(p.passed for p in pairs)} of {len(pairs)} pairs on two machines pass "
          f"({sum(p.passed for p in one)} of {len(one)} pairs of one commit; {sum(p.passed for p in same_code)} of "
          f"{len(same_code)} pairs of identical kernels, no implementation's hash differs)")
    if a.json:
        a.json.write_text(json.dumps([asdict(p) | {"passed": p.passed, "same_commit": p.same_commit,
                                                   "identical_kernels": not p.changed_impls}
                                      for p in pairs], indent=1) + "\n")
    return 0 if all(p.passed for p in pairs) else 1


def host_pairs_cmd(ctx: typer.Context) -> None:
    """Identical kernels on two hosts: every pair of nightlies on two machines, gated both ways; exit 1 when a
    series of unchanged code blocks (the arguments and --help are main's)."""
    raise typer.Exit(main(ctx.args))


# how ci.cli registers host_pairs_cmd: every argument, --help included, goes to main's parser
COMMAND_SETTINGS = dict(context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
                        add_help_option=False)


if __name__ == "__main__":
    raise SystemExit(main())
