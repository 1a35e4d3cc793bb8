"""Series queries: a series is (technique, impl, case, metric, hardware key, software key, protocol).

Used by the gate, the change-point detector, the nightly report and the dashboard.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any, Iterable, Optional

from sqlalchemy import or_, select
from sqlalchemy.orm import Session, defer

from db.models import Benchmark, Environment, Result, Run
from suite.record import HASH_SCHEME, result_row


@dataclass(frozen=True, order=True)
class SeriesKey:
    """The identity of a series; two results are comparable only when their keys are equal."""

    technique: str
    impl: str
    case_id: str
    metric: str
    hardware_key: str
    software_key: str
    protocol: str = ""

    @property
    def subject(self) -> tuple[str, str, str, str]:
        """(technique, impl, case, metric): the part that ignores machine and protocol."""
        return (self.technique, self.impl, self.case_id, self.metric)

    def label(self) -> str:
        return f"{self.technique}/{self.impl}/{self.case_id}/{self.metric}"

    def as_dict(self) -> dict[str, str]:
        return asdict(self)


def key_of_row(row: dict, hardware_key: str, software_key: str) -> SeriesKey:
    """The series key of a result-file row (dict as in the result file) on a given environment."""
    return SeriesKey(row["technique"], row["impl"], row["case"], row["metric"], hardware_key,
                     software_key, (row.get("stats") or {}).get("protocol") or "")


@dataclass
class Point:
    """One run's value of a series."""

    run_id: str
    started_at: datetime
    value: Optional[float]
    status: str
    samples: list[float] = field(default_factory=list)
    stats: dict[str, Any] = field(default_factory=dict)
    git_commit: Optional[str] = None
    git_branch: Optional[str] = None
    unit: str = ""
    direction: str = "lower"
    error: Optional[str] = None


def _query(tier: Optional[str], technique: Optional[Iterable[str]], reasons: Optional[Iterable[str]]):
    q = (select(Result, Benchmark, Run, Environment)
         .join(Benchmark, Result.benchmark_id == Benchmark.id)
         .join(Run, Result.run_id == Run.id)
         .join(Environment, Run.environment_id == Environment.id))
    if tier:
        q = q.where(Run.tier == tier)
    if technique:
        q = q.where(Benchmark.technique.in_(list(technique)))
    if reasons:
        q = q.where(Run.reason.in_(list(reasons)))
    return q.order_by(Run.started_at, Run.id)


def _key(res: Result, b: Benchmark, env: Environment) -> SeriesKey:
    return SeriesKey(b.technique, b.impl, b.case_id, res.metric, env.hardware_key, env.software_key,
                     res.protocol or "")


def _point(res: Result, run: Run, with_samples: bool = True) -> Point:
    samples = list(res.samples or []) if with_samples else []
    return Point(run.id, run.started_at, res.value, res.status, samples, dict(res.stats or {}),
                 run.git_commit, run.git_branch, res.unit, res.direction, res.error)


def all_series(session: Session, tier: Optional[str] = None, technique: Optional[Iterable[str]] = None,
               reasons: Optional[Iterable[str]] = None, with_samples: bool = True) -> dict[SeriesKey, list[Point]]:
    """Every series' points in time order (optionally only a tier, techniques, run reasons)."""
    out: dict[SeriesKey, list[Point]] = {}
    q = _query(tier, technique, reasons)
    # a point holds neither the result's nor the benchmark's params, nor the run's config or the raw
    # environment: those JSON columns are not decoded (they and the samples were most of detect's time)
    q = q.options(defer(Result.params), defer(Benchmark.params),
                  defer(Run.config), defer(Environment.raw))
    if not with_samples:  # detect and the nightly read no samples
        q = q.options(defer(Result.samples))
    for res, b, run, env in session.execute(q):
        out.setdefault(_key(res, b, env), []).append(_point(res, run, with_samples))
    return out


def history(session: Session, key: SeriesKey, tier: Optional[str] = None) -> list[Point]:
    """One series' points in time order."""
    q = (_query(tier, [key.technique], None)
         .where(Benchmark.impl == key.impl, Benchmark.case_id == key.case_id, Result.metric == key.metric,
                Environment.hardware_key == key.hardware_key, Environment.software_key == key.software_key))
    return [_point(res, run) for res, b, run, env in session.execute(q) if (res.protocol or "") == key.protocol]


def run_document(session: Session, run_id: str) -> dict:
    """A stored run rebuilt as a result-file document (schema 1): {"schema", "run", "results"}."""
    run = session.get(Run, run_id)
    if run is None:
        raise KeyError(run_id)
    env = session.get(Environment, run.environment_id)
    # columns, not ORM objects: a whole nightly's rows without an identity map (a third of the time)
    q = (select(Benchmark.technique, Benchmark.impl, Benchmark.case_id, Result.metric, Result.unit,
                Result.direction, Result.value, Result.samples, Result.stats, Result.status, Result.error,
                Result.params, Benchmark.params, Result.impl_version, Result.impl_hash)
         .join(Benchmark, Result.benchmark_id == Benchmark.id).where(Result.run_id == run_id).order_by(Result.id))
    rows = [result_row(tech, impl, case, metric, unit, direction, value=value, samples=samples or [], stats=stats,
                       status=status, error=error, params=params or b_params, impl_version=version, impl_hash=h)
            for tech, impl, case, metric, unit, direction, value, samples, stats, status, error, params, b_params,
            version, h in session.execute(q)]
    header = {"id": run.id, "started_at": run.started_at.isoformat(),
              "finished_at": run.finished_at.isoformat() if run.finished_at else None, "tier": run.tier,
              "reason": run.reason, "source": run.source,
              "git": {"commit": run.git_commit, "branch": run.git_branch, "dirty": run.git_dirty,
                      "date": run.git_date.isoformat() if run.git_date else None},
              "env": dict(env.raw or {}), "config": {**(run.config or {}), "impl_hash": HASH_SCHEME},  # stored: re-keyed
              "hardware_key": env.hardware_key, "software_key": env.software_key}
    return {"schema": 1, "run": header, "results": rows}


def latest_run_id(session: Session, ref: str, tier: Optional[str] = None) -> Optional[str]:
    """The newest run whose id or git commit (or a prefix of 7+ hex of either) or branch equals ref."""
    if session.get(Run, ref) is not None:
        return ref
    conds = [Run.git_branch == ref, Run.git_commit == ref]
    if len(ref) >= 7 and all(c in "0123456789abcdef" for c in ref.lower()):
        conds += [Run.git_commit.startswith(ref.lower()), Run.id.startswith(ref.lower())]
    q = select(Run.id).where(or_(*conds))
    if tier:
        q = q.where(Run.tier == tier)
    return session.scalar(q.order_by(Run.started_at.desc(), Run.id.desc()).limit(1))


def nightly_runs(session: Session, limit: int = 60) -> list[Run]:
    """The newest nightly-tier runs, oldest first."""
    rows = session.scalars(select(Run).where(Run.tier == "nightly").order_by(Run.started_at.desc()).limit(limit))
    return list(reversed(list(rows)))
