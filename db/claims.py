"""Claim statuses computed from stored results (the ledger), for `kwatch claims` and the dashboard.

Status rule, per claim (suite/claims/spec.py has the band rule itself):
  arithmetic check             -> the band judges the computed value (reproduced / contradicted)
  runs_on hardware never seen  -> "not reproducible on our hardware", with a labelled projection
                                  and our nearest measurement (analog) where there is one
  no check here                -> pending (no benchmark in this suite measures it)
  check without stored result  -> pending; "needs a re-run" when only runs without a git commit have one
  otherwise                    -> the band judges the latest run's value on matching hardware
A benchmark claim also carries its history: the band's verdict on each of the last HISTORY matching
runs timed under the latest run's protocol version; where they disagree the claim is "unsettled" (its
status is still the latest run's, and the evidence says how the runs split), so a figure on the band's
edge does not read as settled.
Only runs that record their git commit count, for the status and for the analog alike: a result
that cannot be traced to the code that produced it backs no claim.
"""
from __future__ import annotations

import statistics
from collections import Counter
from dataclasses import asdict, dataclass, field, replace
from datetime import timezone
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from db.models import Benchmark, Environment, Result, Run
from runners.timing import protocol_version
from suite.claims.spec import (NOT_ON_OUR_HARDWARE, PENDING, Arithmetic, Claim, Custom, Projection, Selector,
                               judge)
from suite.spec import resolve


@dataclass
class Verdict:
    """One claim's status and the numbers behind it."""

    claim: Claim
    status: str
    value: float | None = None  # the measured or computed value the band judged
    detail: str = ""
    evidence: list[dict] = field(default_factory=list)  # the stored rows used
    projection: Projection | None = None
    analog: float | None = None  # our nearest measurement, when the claim's hardware is absent
    analog_detail: str = ""
    history: list[dict] = field(default_factory=list)  # newest first: run_id, started_at, value, status

    @property
    def unsettled(self) -> bool:
        """The band's verdicts on the last matching runs disagree."""
        return len({h["status"] for h in self.history}) > 1

    def row(self) -> dict[str, Any]:
        """A flat, JSON-ready dict (the dashboard's and `kwatch claims --format json`'s row)."""
        c = self.claim
        p = self.projection
        return {
            "id": c.id, "statement": c.statement, "figure": c.figure_text(), "unit": c.unit,
            "source": c.source, "url": c.url, "measured_by": c.measured_by, "hardware": c.hardware,
            "section": c.section, "technique": c.technique, "recalled": c.recalled, "note": c.note,
            "check": _check_kind(c), "quantity": c.quantity,
            "band": c.band.describe() if c.band else None, "status": self.status, "value": self.value,
            "detail": self.detail, "evidence": self.evidence,
            "projection": None if p is None else {**asdict(p), "label": "projection"},
            "analog": self.analog, "analog_unit": c.analog_unit, "analog_detail": self.analog_detail,
            "history": self.history, "unsettled": self.unsettled,
        }


def _check_kind(c: Claim) -> str:
    return {Arithmetic: "arithmetic", Selector: "benchmark", Custom: "benchmark"}.get(type(c.check), "none")


# ---------------------------------------------------------------- stored rows
def _matches(gpu: str | None, device: str, runs_on: tuple[str, ...], cpu_ok: bool) -> bool:
    if device != "cuda" and not cpu_ok:
        return False
    if not runs_on:
        return True
    name = (gpu or "").lower()
    return any(h.lower() in name for h in runs_on)


def hardware_seen(session: Session) -> list[str]:
    """GPU names of every stored environment."""
    return sorted({g for g in session.scalars(select(Environment.gpu_name)) if g})


def _filtered(q, technique: str, metric: str | None, impls: tuple[str, ...] | None, case: str | None,
              committed: bool = True):
    q = (q.select_from(Result).join(Benchmark, Result.benchmark_id == Benchmark.id).join(Run, Result.run_id == Run.id)
         .join(Environment, Run.environment_id == Environment.id)
         .where(Benchmark.technique == technique, Result.status == "ok", Result.value.is_not(None)))
    if committed:  # a run without a commit cannot back a claim
        q = q.where(Run.git_commit.is_not(None))
    if metric is not None:
        q = q.where(Result.metric == metric)
    if impls is not None:
        q = q.where(Benchmark.impl.in_(impls))
    if case is not None:
        q = q.where(Benchmark.case_id == case)
    return q


def _batches(runs: list[tuple], first: int = 32):
    """runs in consecutive slices that double in size (a check that finds nothing reads every run in a
    handful of queries)."""
    i, n = 0, first
    while i < len(runs):
        yield runs[i:i + n]
        i, n = i + n, 2 * n


def _runs_newest_first(session: Session, runs_on: tuple[str, ...], cpu_ok: bool, committed: bool) -> list[tuple]:
    """(run id, started_at, gpu_name) of every run on matching hardware, newest first (ties: larger id
    first), from the small runs table (kept for the session): the checks read the results of a few runs
    at a time, newest first, and stop once they have what they need, not every run a large database holds."""
    memo = session.info.setdefault("claims_runs", {})
    if "all" not in memo:
        q = select(Run.id, Run.started_at, Environment.gpu_name, Environment.device, Run.git_commit).join(
            Environment, Run.environment_id == Environment.id)
        memo["all"] = sorted(session.execute(q).all(), key=lambda r: (_ts(r[1]), r[0]), reverse=True)
    key = (runs_on, cpu_ok, committed)
    if key not in memo:
        memo[key] = [(rid, st, gpu) for rid, st, gpu, device, commit in memo["all"]
                     if _matches(gpu, device, runs_on, cpu_ok) and (commit is not None or not committed)]
    return memo[key]


def latest_run_id(session: Session, technique: str, metric: str | None, impls: tuple[str, ...] | None,
                  case: str | None, runs_on: tuple[str, ...], cpu_ok: bool,
                  need: tuple[tuple[str, ...], ...] = (), committed: bool = True) -> str | None:
    """The most recent run with valid rows of technique (metric, impls, case) on matching hardware
    that holds, for each group in `need`, at least one of its implementations."""
    ids = latest_run_ids(session, technique, metric, impls, case, runs_on, cpu_ok, need, committed, 1)
    return ids[0] if ids else None


def latest_run_ids(session: Session, technique: str, metric: str | None, impls: tuple[str, ...] | None,
                   case: str | None, runs_on: tuple[str, ...], cpu_ok: bool,
                   need: tuple[tuple[str, ...], ...] = (), committed: bool = True, limit: int = 1) -> list[str]:
    """Up to `limit` such runs, newest first (see latest_run_id)."""
    q = _filtered(select(Run.id, Benchmark.impl).distinct(), technique, metric, impls, case, committed)
    if session.execute(q.limit(1)).first() is None:
        return []
    out: list[str] = []
    for batch in _batches([r[0] for r in _runs_newest_first(session, runs_on, cpu_ok, committed)]):
        have: dict[str, set] = {}
        for run_id, impl in session.execute(q.where(Run.id.in_(batch))):
            have.setdefault(run_id, set()).add(impl)
        for run_id in batch:
            if run_id in have and all(have[run_id] & set(g) for g in need):
                out.append(run_id)
                if len(out) == limit:
                    return out
    return out


def _rows(session: Session, technique: str, metric: str | None, impls: tuple[str, ...] | None,
          case: str | None, run_id: str) -> list[dict]:
    """Valid stored rows of one run, as dicts."""
    q = _filtered(select(Result.value, Result.metric, Result.direction, Result.params, Benchmark.impl,
                         Benchmark.case_id, Run.id, Run.started_at, Environment.gpu_name, Environment.device),
                  technique, metric, impls, case, committed=False).where(Run.id == run_id)
    return [{"value": r[0], "metric": r[1], "direction": r[2], "params": r[3] or {}, "impl": r[4],
             "case": r[5], "run_id": r[6], "started_at": r[7], "gpu_name": r[8], "device": r[9],
             "technique": technique} for r in session.execute(q)]


def _ts(t) -> float:
    """Seconds since the epoch; SQLite hands back naive datetimes (stored as UTC)."""
    return (t if t.tzinfo else t.replace(tzinfo=timezone.utc)).timestamp()


def _pick(values: list[float], higher: bool, how: str) -> float:
    if how == "median":
        return statistics.median(values)
    best = max(values) if higher else min(values)
    worst = min(values) if higher else max(values)
    return best if how == "best" else worst


def _need(sel: Selector) -> tuple[tuple[str, ...], ...]:
    return (sel.impls(), sel.baselines()) if sel.baselines() else (sel.impls(),)


def measure(session: Session, sel: Selector, runs_on: tuple[str, ...],
            committed: bool = True, run_id: str | None = None) -> tuple[float, str, list[dict]] | None:
    """The selector's value from the latest matching run (or from run_id): (value, detail, evidence) or None."""
    impls = sel.impls() + sel.baselines()
    if run_id is None:
        run_id = latest_run_id(session, sel.technique, sel.metric, impls, sel.case, runs_on, sel.cpu_ok,
                               _need(sel), committed)
    if run_id is None:
        return None
    run = [r for r in _rows(session, sel.technique, sel.metric, impls, sel.case, run_id)
           if all(r["params"].get(k) == v for k, v in sel.params.items())]
    if not run:
        return None
    higher = run[0]["direction"] == "higher"
    per_case: dict[str, dict[str, list[float]]] = {}
    for r in run:
        per_case.setdefault(r["case"], {}).setdefault(r["impl"], []).append(r["value"])
    values, parts = [], []
    for case, by_impl in sorted(per_case.items()):
        mine = {i: _pick(v, higher, "worst") for i, v in by_impl.items() if i in sel.impls()}
        if not mine:
            continue
        best_impl = (max if higher else min)(mine, key=mine.get)
        v = mine[best_impl]
        if sel.baselines():
            base = {i: _pick(v, higher, "worst") for i, v in by_impl.items() if i in sel.baselines()}
            if not base:
                continue
            best_base = (max if higher else min)(base, key=base.get)
            ratio = base[best_base] / v if (sel.speedup and not higher) else v / base[best_base]
            values.append((ratio * sel.scale, case))
            parts.append(f"{case}: {best_impl} {v:.4g} / {best_base} {base[best_base]:.4g}")
        else:
            values.append((v * sel.scale, case))
            parts.append(f"{case}: {best_impl} {v:.4g}")
    if not values:
        return None
    ratio_higher = higher or (sel.speedup and bool(sel.baselines()))
    chosen = _pick([v for v, _ in values], ratio_higher, sel.reduce)
    gpu = run[0]["gpu_name"] or f"CPU ({run[0]['device']})"
    detail = f"run {run[0]['run_id']} on {gpu}, {sel.metric}: " + "; ".join(parts)
    if len(values) > 1:
        detail += f" ({sel.reduce} of {len(values)} cases)"
    evidence = [{k: (str(v) if k == "started_at" else v) for k, v in r.items() if k != "params"} for r in run]
    return chosen, detail, evidence


def custom_measure(session: Session, chk: Custom, runs_on: tuple[str, ...], cpu_ok: bool = True,
                   committed: bool = True):
    """A Custom check over the latest stored value of every (implementation, case) of its techniques
    (rows of chk.metric, if set) on matching hardware, all passed to its function together; a run of
    a subset of the implementations leaves the others' latest rows in place."""
    rows, runs = [], set()
    newest_first = _runs_newest_first(session, runs_on, cpu_ok, committed)
    for tech in chk.techniques():
        # Every (implementation, case) with a row of the metric in any run; one that appears in no valid row
        # on matching hardware makes the loop below read every run, as it did before it stopped early.
        ids = select(Benchmark.id).where(Benchmark.technique == tech)
        keys_q = select(Benchmark.impl, Benchmark.case_id).where(
            Benchmark.id.in_(select(Result.benchmark_id).distinct().where(
                Result.benchmark_id.in_(ids), *([Result.metric == chk.metric] if chk.metric is not None else []))))
        keys = set(session.execute(keys_q).all())
        latest: dict[tuple[str, str], tuple] = {}
        for batch in _batches(newest_first):
            q = _filtered(select(Benchmark.impl, Benchmark.case_id, Run.id).distinct(), tech, chk.metric, None,
                          None, committed).where(Run.id.in_([r[0] for r in batch]))
            where = {r[0]: (_ts(r[1]), r[0], r[2] or "CPU") for r in batch}
            for impl, case, run_id in session.execute(q):
                if (impl, case) not in latest or where[run_id][:2] > latest[(impl, case)][:2]:
                    latest[(impl, case)] = where[run_id]
            if keys <= set(latest):
                break
        if not latest:
            return None
        for run_id in {v[1] for v in latest.values()}:
            rows += [r for r in _rows(session, tech, chk.metric, None, None, run_id)
                     if latest[(r["impl"], r["case"])][1] == run_id]
        runs |= {f"{tech} run {v[1]} on {v[2]}" for v in latest.values()}
    out = resolve(chk.target)(rows)
    if out is None:
        return None
    value, detail = out
    return value, f"{'; '.join(sorted(runs))}: {detail}", []


def _measure(session: Session, chk, runs_on: tuple[str, ...], cpu_ok: bool | None = None, committed: bool = True):
    if isinstance(chk, Custom):
        return custom_measure(session, chk, runs_on, True if cpu_ok is None else cpu_ok, committed)
    if cpu_ok is False and chk.cpu_ok:
        chk = replace(chk, cpu_ok=False)
    return measure(session, chk, runs_on, committed)


def _uncommitted(session: Session, chk, runs_on: tuple[str, ...], cpu_ok: bool | None = None) -> str:
    """' (only runs without a git commit measure it: ...)' when such runs would decide it, else ''."""
    got = _measure(session, chk, runs_on, cpu_ok, committed=False)
    if got is None:
        return ""
    return (f"; needs a re-run from a commit: only runs without a git commit measure it, and they back no claim "
            f"({got[1][:160]})")


HISTORY = 5  # matching runs whose verdicts a benchmark claim's history holds


def history(session: Session, c: Claim, latest: float, limit: int = HISTORY) -> list[dict]:
    """The band's verdict on each of the last `limit` matching runs of a Selector claim, newest first;
    `latest` is the value already measured on the newest of them (the claim's status)."""
    sel = c.check
    if not isinstance(sel, Selector) or c.band is None:
        return []
    starts = {r[0]: r[1] for r in _runs_newest_first(session, c.runs_on, sel.cpu_ok, True)}
    out = []
    # a window of 4 x limit runs: runs of another protocol version interleaved with the newest's are passed by
    ids = latest_run_ids(session, sel.technique, sel.metric, sel.impls() + sel.baselines(), sel.case, c.runs_on,
                         sel.cpu_ok, _need(sel), True, 4 * limit)
    version = _timing_versions(session, sel.technique, sel.metric, ids)
    # two timing protocols are never one series: the history holds the newest run's protocol version only
    ids = [r for r in ids if version.get(r) == version.get(ids[0])][:limit] if ids else []
    for i, run_id in enumerate(ids):
        got = (latest,) if i == 0 else measure(session, sel, c.runs_on, True, run_id)
        if got is not None:
            out.append({"run_id": run_id, "started_at": str(starts.get(run_id)), "value": got[0],
                        "status": judge(got[0], c.band)})
    return out


def _timing_versions(session: Session, technique: str, metric: str | None, run_ids: list[str]) -> dict[str, int]:
    """run id -> the newest timing protocol version among its rows of the technique (and metric); 0 untimed."""
    q = select(Result.run_id, Result.protocol).distinct().join(Benchmark, Result.benchmark_id == Benchmark.id).where(
        Benchmark.technique == technique, Result.run_id.in_(run_ids), *([Result.metric == metric] if metric else []))
    out: dict[str, int] = {}
    for run_id, proto in session.execute(q):
        out[run_id] = max(out.get(run_id, 0), protocol_version(proto))
    return out


def _history_text(h: list[dict]) -> str:
    """'; unsettled: ...' when the runs' verdicts disagree, else ''."""
    split = Counter(x["status"] for x in h)
    if len(split) < 2:
        return ""
    counts = ", ".join(f"{n} {st}" for st, n in sorted(split.items()))
    vals = [x["value"] for x in h]
    return (f"; unsettled: the last {len(h)} matching runs split ({counts}; values {min(vals):.4g}-"
            f"{max(vals):.4g}), the status is the latest's")


# ---------------------------------------------------------------- the ledger
def evaluate_claim(session: Session, c: Claim, seen: list[str]) -> Verdict:
    """One claim's verdict against the stored results (see the module docstring for the rule)."""
    if isinstance(c.check, Arithmetic):
        value, detail = resolve(c.check.target)(**c.check.kwargs)
        return Verdict(c, judge(value, c.band), value, detail)
    present = not c.runs_on or any(h.lower() in g.lower() for g in seen for h in c.runs_on)
    if not present:
        v = Verdict(c, NOT_ON_OUR_HARDWARE, detail=f"no stored run on {' / '.join(c.runs_on)}; "
                    f"hardware seen: {', '.join(seen) or 'none'}")
        if c.analog is not None:
            got = _measure(session, c.analog, (), cpu_ok=False)  # our GPUs only
            if got:
                v.analog, v.analog_detail = got[0], got[1]
            else:
                v.detail += _uncommitted(session, c.analog, (), cpu_ok=False)
        if c.projection:
            v.projection = resolve(c.projection)(v.analog)
        return v
    if c.check is None:
        return Verdict(c, PENDING, detail="no benchmark in this suite measures it" +
                       (f": {c.note}" if c.note else ""))
    got = _measure(session, c.check, c.runs_on)
    if got is None:
        if isinstance(c.check, Custom):
            what = " / ".join(c.check.techniques()) + (f" {c.check.metric}" if c.check.metric else "")
        else:
            what = (f"{c.check.technique} {c.check.metric} of {', '.join(c.check.impls())}"
                    + (f" (with {', '.join(c.check.baselines())})" if c.check.baselines() else "")
                    + (f", case {c.check.case}" if c.check.case else ""))
        cpu = isinstance(c.check, Custom) or c.check.cpu_ok
        hw = " / ".join(c.runs_on) if c.runs_on else ("any hardware" if cpu else "any GPU")
        return Verdict(c, PENDING, detail=f"no stored result yet: {what} on {hw}"
                       + _uncommitted(session, c.check, c.runs_on))
    value, detail, evidence = got
    h = history(session, c, value)
    return Verdict(c, judge(value, c.band), value, detail + _history_text(h), evidence, history=h)


def evaluate(session: Session, claims: list[Claim] | None = None) -> list[Verdict]:
    """Verdicts for `claims` (default: every claim of the suite), in ledger order."""
    if claims is None:
        from suite.claims.registry import all_claims

        claims = all_claims()
    seen = hardware_seen(session)
    out = []
    for c in claims:
        try:
            out.append(evaluate_claim(session, c, seen))
        except Exception as exc:  # one broken check must not hide the rest of the ledger
            session.rollback()  # PostgreSQL refuses further queries in a failed transaction
            out.append(Verdict(c, PENDING, detail=f"the check failed: {type(exc).__name__}: {str(exc)[:300]}"))
    return out


def ledger(url: str | None = None, claims: list[Claim] | None = None) -> list[dict[str, Any]]:
    """The whole ledger as flat dicts (see Verdict.row), read-only: the dashboard's query."""
    from db.queries import read_engine  # pandas, which the CLI's ledger does not need

    with Session(read_engine(url)) as session:
        return [v.row() for v in evaluate(session, claims)]
