"""A tier's wall time on one GPU, estimated from the job times earlier runs recorded (`stats.job_s`).

Each job of the plan takes the time of its newest recorded run on the same GPU under the same timing
protocol; a job never recorded there takes the median of its technique's recorded jobs on that case
(else of the technique, else of all jobs) and is listed as guessed. A job skipped there before (the host
lacked what it requires), or never recorded but requiring the CPU, costs nothing.
"""
from __future__ import annotations

import glob
import statistics
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path

from runners.resultfile import MAX_FLUSH_SHARE, UNREADABLE, load
from runners.timing import Protocol

# What a run costs beyond its jobs: the ceilings (about 5 s on the H200) and worker start-up, 3-8 s in
# the committed H200 runs (finished_at - started_at - sum of job_s); plus the result file's rewrites, at
# most MAX_FLUSH_SHARE of the jobs' time (the whole nightly at 29b1b16, rewriting after every job, spent
# 160 s of 570 on them).
RUN_OVERHEAD_S = 10.0
STATUSES_TIMED = ("ok", "failed_correctness", "error")


@dataclass(frozen=True)
class JobTime:
    """One planned job and the seconds it is expected to take; `source` the file it came from
    ("" when guessed, "skipped" when the GPU host skips it)."""

    technique: str
    impl: str
    case: str
    seconds: float
    source: str

    @property
    def guessed(self) -> bool:
        return self.source == ""


@dataclass
class Estimate:
    """The plan's jobs with their expected seconds, plus the run's own overhead."""

    gpu: str
    jobs: list[JobTime]
    overhead_s: float = RUN_OVERHEAD_S
    files: list[str] = field(default_factory=list)

    @property
    def jobs_s(self) -> float:
        return sum(j.seconds for j in self.jobs)

    @property
    def rewrites_s(self) -> float:
        """The most the result file's rewrites may add (a share of the jobs' time)."""
        return MAX_FLUSH_SHARE * self.jobs_s

    @property
    def total_s(self) -> float:
        return self.overhead_s + (1 + MAX_FLUSH_SHARE) * self.jobs_s

    @property
    def guessed(self) -> list[JobTime]:
        return [j for j in self.jobs if j.guessed]

    def by_technique(self) -> dict[str, tuple[int, float]]:
        """technique -> (jobs, seconds), slowest first."""
        out: dict[str, list[float]] = {}
        for j in self.jobs:
            out.setdefault(j.technique, []).append(j.seconds)
        return dict(sorted(((t, (len(s), sum(s))) for t, s in out.items()), key=lambda kv: -kv[1][1]))


def run_time(doc: dict) -> dict | None:
    """A finished run's wall seconds and its jobs' seconds by technique (slowest first), from its
    result document; None for a run without both timestamps."""
    run = doc.get("run") or {}
    try:
        wall = (datetime.fromisoformat(run["finished_at"]) - datetime.fromisoformat(run["started_at"])).total_seconds()
    except (KeyError, TypeError, ValueError):
        return None
    jobs: dict[tuple, float] = {}
    for row in doc.get("results") or []:
        seconds = (row.get("stats") or {}).get("job_s")
        if seconds is not None:  # every row of a job (its metrics, its probe points) carries the job's time
            jobs[(row["technique"], row["impl"], seconds)] = float(seconds)
    per: dict[str, float] = {}
    for (tech, _, _), seconds in jobs.items():
        per[tech] = per.get(tech, 0.0) + seconds
    return {"wall_s": wall, "by_technique": dict(sorted(per.items(), key=lambda kv: -kv[1]))}


def result_files(patterns: list[str]) -> list[str]:
    """Result files named by paths, folders (searched recursively) or glob patterns, sorted, unique."""
    found: set[str] = set()
    for pat in patterns:
        p = Path(pat)
        if p.is_dir():
            found.update(str(f) for f in p.rglob("*") if f.name.endswith((".json", ".json.gz")))
        else:
            found.update(glob.glob(pat, recursive=True) or ([pat] if p.exists() else []))
    return sorted(found)


def _duration_rules(protocol) -> dict | None:
    """A run's protocol with what does not change a job's duration left out: v3 and v4 differ only in
    how the L2 is flushed (written or read, the same bytes), so v3 runs' job times estimate v4's."""
    if not isinstance(protocol, dict):
        return None
    version = protocol.get("cuda_version", 1)
    rest = {k: v for k, v in protocol.items() if k not in ("cuda_version", "flush_mode")}
    return {**rest, "cuda_version": 3 if version in (3, 4) else version}


def recorded_times(paths: list[str], gpu: str, protocol: Protocol | None = None,
                   unreadable: list[str] | None = None) -> dict[tuple, tuple]:
    """(technique, impl, case) -> (started_at, job seconds, path): the newest run of each job on a GPU
    named `gpu` under `protocol` (default: the nightly's). Files that are not result files are passed by;
    those that cannot be read at all (truncated gzip, bad JSON) are appended to `unreadable`."""
    want = _duration_rules(asdict(protocol or Protocol()))
    times: dict[tuple, tuple] = {}
    for path in paths:
        try:
            doc = load(path)
        except UNREADABLE:
            if unreadable is not None:
                unreadable.append(path)
            continue
        run = doc.get("run") if isinstance(doc, dict) else None
        if not isinstance(run, dict) or not isinstance(doc.get("results"), list):
            continue
        env, config = run.get("env") or {}, run.get("config") or {}
        if env.get("device") != "cuda" or env.get("gpu_name") != gpu or _duration_rules(config.get("protocol")) != want:
            continue
        started = run.get("started_at") or ""
        for row in doc["results"]:
            seconds = (row.get("stats") or {}).get("job_s")
            if row.get("status") == "skipped":  # the host lacked what it requires: no worker, no time
                seconds = 0.0
            elif seconds is None or row.get("status") not in STATUSES_TIMED:
                continue
            key = (row["technique"], row["impl"], row["case"])
            if key not in times or times[key][0] < started:
                times[key] = (started, float(seconds), path)
    return times


def estimate(jobs, times: dict[tuple, tuple], gpu: str, files: list[str] = ()) -> Estimate:
    """The Estimate of planned (technique, impl, case) jobs from `recorded_times`."""
    by_case: dict[tuple, list[float]] = {}
    by_tech: dict[str, list[float]] = {}
    ran = {k: t for k, t in times.items() if t[1] > 0}  # a skipped job says nothing of the others' time
    for (tech, _impl, case), (_, seconds, _) in ran.items():
        by_case.setdefault((tech, case), []).append(seconds)
        by_tech.setdefault(tech, []).append(seconds)
    every = [t[1] for t in ran.values()] or [0.0]
    out = []
    for tech, impl, case in jobs:
        key = (tech.name, impl.name, case.id)
        if "cpu" in impl.requires:
            out.append(JobTime(*key, 0.0, "skipped"))
        elif key in times:
            out.append(JobTime(*key, times[key][1], times[key][2]))
        else:
            pool = by_case.get((tech.name, case.id)) or by_tech.get(tech.name) or every
            out.append(JobTime(*key, statistics.median(pool), ""))
    return Estimate(gpu, out, files=list(files))
