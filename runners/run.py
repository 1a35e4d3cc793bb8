"""Plan and execute a run: jobs per (technique, case, impl), each isolated in a worker process."""
from __future__ import annotations

import random
import time
from dataclasses import asdict, dataclass, field

from runners import ceilings as machine
from runners.code_hash import impl_hash
from runners.env import fingerprint, git_state
from runners.job import rows_with_status, technique_of
from runners.pool import ROOT, Worker, WorkerFailure
from runners.resultfile import ResultFile, new_run
from runners.sandbox import namespaced
from runners.timing import Protocol
from suite.registry import get, techniques


@dataclass
class RunOptions:
    tier: str = "smoke"
    techniques: list[str] = field(default_factory=list)
    impls: list[str] = field(default_factory=list)
    cases: list[str] = field(default_factory=list)
    device: str = "auto"
    reason: str = "manual"
    timeout_s: float = 600.0
    memory_gb: float | None = None  # resident memory a job may hold (default: half of this host's)
    seed: int | None = None
    ceilings: bool = True  # measure the GPU's ceilings once before the jobs (none on the CPU)
    protocol: Protocol | None = None  # default: Protocol(), or SMOKE_PROTOCOL for the smoke tier
    # A technique built at run time instead of the registry's: {"target": "module:function", "args":
    # {...}} returning it, called here and in each worker (runners.kernelbench:technique).
    source: dict | None = None
    isolate_cases: bool = False  # a fresh worker process for each case (code under test not trusted)

    def __post_init__(self) -> None:
        if self.protocol is None:
            self.protocol = SMOKE_PROTOCOL if self.tier in ("smoke", "smoke_full") else Protocol()


# The smoke tier checks correctness on the CPU in seconds; its timings are only indicative.
# min_reps 5: the verdict compares timings of at least 5 samples a side (Thresholds.min_samples); with 3, a smoke
# row that met its spread target early could never be judged (a planted +50 % went unseen on a loaded machine)
SMOKE_PROTOCOL = Protocol(target_rel_spread=0.05, max_time_s=0.25, min_reps=5, warmup_reps=1)


def _capabilities(device: str) -> set[str]:
    caps = {"cpu"} if device == "cpu" else {"cuda"}
    try:
        import triton  # noqa: F401

        caps.add("triton")
    except ImportError:
        pass
    if device == "cuda":
        import torch

        major, minor = torch.cuda.get_device_capability(0)
        caps.update(f"sm{m}" for m in (70, 75, 80, 86, 89, 90, 100) if major * 10 + minor >= m)
    return caps


def skipped_rows(tech, impl, case, caps: set[str], device: str) -> list[dict] | None:
    """`skipped` rows when the implementation needs what this host lacks, else None."""
    missing = [r for r in impl.requires if r not in caps]
    if not missing:
        return None
    return rows_with_status(tech, impl, case, impl_hash(tech, impl), "skipped",
                            f"requires {', '.join(missing)}, not on this {device} host")


def plan(opts: RunOptions):
    """(technique, impl, case) triples selected by the options, ordered so a case's
    oracle is computed once; unknown names raise KeyError naming the known ones."""
    if opts.source:
        techs = [technique_of({"source": opts.source})]
    else:
        techs = [get(n) for n in opts.techniques] if opts.techniques else list(techniques().values())
    jobs = []
    for tech in techs:
        impls = ([tech.impl(n) for n in opts.impls if n in {i.name for i in tech.impls}] if opts.impls
                 else tech.impls_for(opts.tier))
        cases = tech.cases_for(opts.tier)
        if opts.cases:
            cases = [c for c in cases if c.id in opts.cases]
        jobs.extend((tech, impl, case) for case in cases for impl in impls)
    if opts.impls:
        known = {i.name for t in techs for i in t.impls}
        missing = [n for n in opts.impls if n not in known]
        if missing:
            raise KeyError(f"unknown implementation(s) {missing}; known: {sorted(known)}")
    if opts.cases:
        known = {c.id for t in techs for c in t.cases}
        missing = [c for c in opts.cases if c not in known]
        if missing:
            raise KeyError(f"unknown case(s) {missing}; known: {sorted(known)}")
    if not jobs:
        raise KeyError(f"the selection matches no case of tier {opts.tier!r}")
    return jobs


def execute(opts: RunOptions, out_path=None, on_result=None, progress=None, worker: Worker | None = None,
            wanted=None) -> ResultFile:
    """Run every planned job and return the result file (written to out_path as it goes); `worker`, when
    given, is a long-lived worker process to use first (left open: a fleet worker keeps it between runs);
    `wanted(tech, impl, case, rows so far)`, when given, says whether a job still runs (False: no rows)."""
    import torch

    device = opts.device if opts.device != "auto" else ("cuda" if torch.cuda.is_available() else "cpu")
    env = fingerprint(device)
    seed = opts.seed if opts.seed is not None else random.randrange(1, 2**31 - 20_000)
    jobs = plan(opts)  # before the result file: a bad selection leaves no file behind
    config = {"techniques": opts.techniques, "impls": opts.impls, "cases": opts.cases,
              "device": device, "seed": seed, "timeout_s": opts.timeout_s,
              "protocol": asdict(opts.protocol),
              # whether code under test ran in namespaces of its own (runners.sandbox; a host may refuse them)
              "sandbox": {"namespaces": namespaced()}}
    run = new_run(opts.tier, opts.reason, git_state(str(ROOT)), env, config)
    run["ceilings"] = machine.measure(device) if opts.ceilings else None
    rf = ResultFile(out_path, run)
    caps = _capabilities(device)
    lent, last_case = worker, None
    try:
        for n, (tech, impl, case) in enumerate(jobs):
            if progress:
                progress(n, len(jobs), f"{tech.name}/{impl.name}/{case.id}")
            if wanted is not None and not wanted(tech, impl, case, rf.results):
                continue
            if opts.isolate_cases and worker is not None and (tech.name, case.id) != last_case:
                if worker is not lent:
                    worker.close()
                worker = None
            last_case = (tech.name, case.id)
            rows = skipped_rows(tech, impl, case, caps, device)
            if rows is None:
                if worker is None or not worker.alive():
                    worker = Worker(interpret_triton=device == "cpu",
                                    memory_limit=int(opts.memory_gb * 2**30) if opts.memory_gb else None)
                job = {"id": n, "technique": tech.name, "impl": impl.name, "case": case.id,
                       "device": device, "seed": seed, "protocol": asdict(opts.protocol), "source": opts.source}
                t0 = time.perf_counter()
                try:
                    rows = worker.submit(job, opts.timeout_s)
                except WorkerFailure as exc:
                    rows = rows_with_status(tech, impl, case, impl_hash(tech, impl), "error", str(exc))
                    worker = None
                machine.add_shares(tech, impl, rows, run["ceilings"])
                for r in rows:  # the job's whole wall time (check + timing + probe), for budgets
                    r["stats"]["job_s"] = round(time.perf_counter() - t0, 3)
            rf.add(rows)
            if on_result:
                on_result(rows)
        if progress:
            progress(len(jobs), len(jobs), "done")
    except BaseException:  # stopped early (a signal, an exception): every finished job stays in the file
        rf.flush_pending()
        raise
    finally:
        if worker is not None and worker is not lent:
            worker.close()
    rf.finish({"sm_clock_mhz": fingerprint().get("sm_clock_mhz")} if device == "cuda" else None)
    return rf


def broken(results: list[dict]) -> list[dict]:
    """Rows that make a run fail: errors, and failed correctness outside probes' measurements."""
    return [r for r in results if r["status"] == "error"
            or (r["status"] == "failed_correctness" and not r["stats"].get("probe")
                and not r["stats"].get("expected_failure"))]
