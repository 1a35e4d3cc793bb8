"""A/B on one machine: two source trees measured interleaved, case by case (base, head, base, head ...),
so clock and machine drift fall on both sides alike (as `asv continuous` and nvbench's compare do)."""
from __future__ import annotations

import random
import statistics
import time
from dataclasses import asdict
from pathlib import Path

from runners.env import fingerprint
from runners.job import rows_with_status
from runners.pool import Worker, WorkerFailure
from runners.resultfile import ResultFile, new_run
from runners.run import RunOptions, _capabilities, plan, skipped_rows


def merge_rounds(rounds: list[list[dict]]) -> list[dict]:
    """One side's rows of several rounds of the same job -> one set of rows: the raw samples of every
    round pooled and the value their median; a round that did not end `ok` decides the row."""
    merged = []
    for i, first in enumerate(rounds[0]):
        same = [r[i] for r in rounds if i < len(r) and r[i]["metric"] == first["metric"]
                and r[i]["case"] == first["case"]]
        bad = next((r for r in same if r["status"] != "ok"), None)
        if bad is not None or first["stats"].get("probe") or first["metric"] == "rel_err" or not first["samples"]:
            merged.append(bad or (max(same, key=lambda r: r["value"] or 0) if first["metric"] == "rel_err"
                                  else first))
            continue
        row = dict(first)
        row["samples"] = [s for r in same for s in r["samples"]]
        row["value"] = statistics.median(row["samples"])
        row["stats"] = {**first["stats"], "rounds": len(same),
                        "round_values": [r["value"] for r in same]}
        merged.append(row)
    return merged


class _Side:
    def __init__(self, root: Path, git: dict, out: Path, run: dict, opts: RunOptions, device: str) -> None:
        self.root, self.git, self.device, self.opts = root, git, device, opts
        self.rf = ResultFile(out, run)
        self.worker: Worker | None = None

    def submit(self, job: dict, tech, impl, case) -> list[dict]:
        if self.worker is None or not self.worker.alive():
            self.worker = Worker(interpret_triton=self.device == "cpu", root=self.root,
                                 memory_limit=int(self.opts.memory_gb * 2**30) if self.opts.memory_gb else None)
        t0 = time.perf_counter()
        try:
            rows = self.worker.submit(job, self.opts.timeout_s)
        except WorkerFailure as exc:
            rows, self.worker = rows_with_status(tech, impl, case, None, "error", str(exc)), None
        for r in rows:
            r["stats"]["job_s"] = round(time.perf_counter() - t0, 3)
        return rows

    def close(self) -> None:
        if self.worker is not None:
            self.worker.close()


def execute_ab(opts: RunOptions, base: tuple[Path, dict], head: tuple[Path, dict], outs: tuple[Path, Path],
               rounds: int = 2, progress=None) -> tuple[ResultFile, ResultFile]:
    """Measure every planned job `rounds` times on each side, alternating base and head (the order
    flips each round); base and head are (tree root, git dict); returns the two result files."""
    import torch

    device = opts.device if opts.device != "auto" else ("cuda" if torch.cuda.is_available() else "cpu")
    env = fingerprint(device)
    seed = opts.seed if opts.seed is not None else random.randrange(1, 2**31 - 20_000)
    jobs = plan(opts)
    config = {"techniques": opts.techniques, "impls": opts.impls, "cases": opts.cases, "device": device,
              "seed": seed, "timeout_s": opts.timeout_s, "protocol": asdict(opts.protocol),
              "ab": {"rounds": rounds, "base": base[1].get("commit"), "head": head[1].get("commit")}}
    sides = [_Side(root, git, out, new_run(opts.tier, f"ab-{name}", git, env, config), opts, device)
             for (root, git), out, name in zip((base, head), outs, ("base", "head"))]
    caps = _capabilities(device)
    try:
        for n, (tech, impl, case) in enumerate(jobs):
            if progress:
                progress(n, len(jobs), f"{tech.name}/{impl.name}/{case.id}")
            skipped = skipped_rows(tech, impl, case, caps, device)
            if skipped is not None:
                for s in sides:
                    s.rf.add(skipped)
                continue
            job = {"id": n, "technique": tech.name, "impl": impl.name, "case": case.id, "device": device,
                   "seed": seed, "protocol": asdict(opts.protocol)}
            got: list[list[list[dict]]] = [[], []]
            for k in range(rounds):
                for i in ((0, 1) if k % 2 == 0 else (1, 0)):
                    got[i].append(sides[i].submit(job, tech, impl, case))
            for s, rows in zip(sides, got):
                s.rf.add(merge_rounds(rows))
        if progress:
            progress(len(jobs), len(jobs), "done")
    finally:
        for s in sides:
            s.close()
    after = {"sm_clock_mhz": fingerprint().get("sm_clock_mhz")} if device == "cuda" else None
    for s in sides:
        s.rf.finish(after)
    return sides[0].rf, sides[1].rf
