"""Stored rows for the claims ledger (db/claims.py): runs on matching hardware newest first, per GPU kind, and the
value of a Selector or Custom check from them. A Selector reads a few runs at a time and stops once it has what it
needs; a Custom check reads where each (implementation, case) was measured once per technique and metric. What
was read is kept for the evaluation's session, shared by every claim, GPU row and history."""
from __future__ import annotations

import re
import statistics
from collections import Counter
from dataclasses import replace
from datetime import timezone

from sqlalchemy import select
from sqlalchemy.orm import Session

from db.models import Benchmark, Environment, Result, Run
from suite.record import protocol_version
from suite.claims.spec import CONFOUNDED, CONTRADICTED, NOT_REPRODUCED, Claim, Custom, Selector, judge
from suite.spec import resolve

CPU = "CPU"  # the kind of a run without a GPU


def on_gpu(text: str, gpu: str) -> str:
    """text with "{gpu}" read as the GPU kind it was measured on ("GPU" where none, "CPU" for a CPU row)."""
    return text.replace("{gpu}", gpu if gpu and gpu != CPU else ("CPU" if gpu else "GPU"))


def gpu_kind(gpu_name: str | None, device: str | None = "cuda") -> str:
    """The GPU kind of a device name ("NVIDIA H100 80GB HBM3" -> "H100", "NVIDIA A100-SXM4-80GB" -> "A100");
    CPU for a run without a GPU."""
    if device != "cuda" or not gpu_name:
        return CPU
    words = [w for w in re.split(r"\s+", gpu_name.strip()) if w.upper() not in ("NVIDIA", "TESLA", "GEFORCE", "RTX")]
    return words[0].split("-")[0] if words else gpu_name


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


def _metric_is(metric: str | tuple[str, ...]):
    """The SQL condition on Result.metric: one metric, or any of several (a Custom check's tuple)."""
    return Result.metric.in_(metric) if isinstance(metric, tuple) else Result.metric == metric


def _filtered(q, technique: str, metric: str | None, impls: tuple[str, ...] | None, case: str | None,
              committed: bool = True):
    q = (q.select_from(Result).join(Benchmark, Result.benchmark_id == Benchmark.id).join(Run, Result.run_id == Run.id)
         .join(Environment, Run.environment_id == Environment.id)
         .where(Benchmark.technique == technique, Result.status == "ok", Result.value.is_not(None)))
    if committed:  # a run without a commit cannot back a claim
        q = q.where(Run.git_commit.is_not(None))
    if metric is not None:
        q = q.where(_metric_is(metric))
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


def _runs_newest_first(session: Session, runs_on: tuple[str, ...], cpu_ok: bool, committed: bool,
                       kind: str | None = None) -> list[tuple]:
    """(run id, started_at, gpu_name) of every run on matching hardware, newest first (ties: larger id
    first), from the small runs table (kept for the session), of GPU kind `kind` where given: the checks read
    the results of a few runs at a time, newest first, and stop once they have what they need, not every run
    a large database holds."""
    memo = session.info.setdefault("claims_runs", {})
    if "all" not in memo:
        q = select(Run.id, Run.started_at, Environment.gpu_name, Environment.device, Run.git_commit).join(
            Environment, Run.environment_id == Environment.id)
        memo["all"] = sorted(session.execute(q).all(), key=lambda r: (_ts(r[1]), r[0]), reverse=True)
    key = (runs_on, cpu_ok, committed, kind)
    if key not in memo:
        memo[key] = [(rid, st, gpu) for rid, st, gpu, device, commit in memo["all"]
                     if _matches(gpu, device, runs_on, cpu_ok) and (commit is not None or not committed)
                     and (kind is None or gpu_kind(gpu, device) == kind)]
    return memo[key]


def kinds_seen(session: Session, runs_on: tuple[str, ...] = (), cpu_ok: bool = True) -> list[str]:
    """GPU kinds of the stored runs on matching hardware, GPUs first (newest name first), CPU last (runs
    without a commit included: such a kind's claims are pending and say they need a re-run)."""
    _runs_newest_first(session, (), True, True)
    rows = session.info["claims_runs"]["all"]
    kinds = {gpu_kind(gpu, device) for _, _, gpu, device, _commit in rows if _matches(gpu, device, runs_on, cpu_ok)}
    return sorted(kinds - {CPU}, reverse=True) + ([CPU] if CPU in kinds else [])


def latest_run_id(session: Session, technique: str, metric: str | None, impls: tuple[str, ...] | None,
                  case: str | None, runs_on: tuple[str, ...], cpu_ok: bool,
                  need: tuple[tuple[str, ...], ...] = (), committed: bool = True, kind: str | None = None) -> str | None:
    """The most recent run with valid rows of technique (metric, impls, case) on matching hardware (of GPU
    kind `kind` where given) that holds, for each group in `need`, at least one of its implementations."""
    ids = latest_run_ids(session, technique, metric, impls, case, runs_on, cpu_ok, need, committed, 1, kind)
    return ids[0] if ids else None


def latest_run_ids(session: Session, technique: str, metric: str | None, impls: tuple[str, ...] | None,
                   case: str | None, runs_on: tuple[str, ...], cpu_ok: bool,
                   need: tuple[tuple[str, ...], ...] = (), committed: bool = True, limit: int = 1,
                   kind: str | None = None) -> list[str]:
    """Up to `limit` such runs, newest first (see latest_run_id)."""
    q = _filtered(select(Run.id, Benchmark.impl).distinct(), technique, metric, impls, case, committed)
    if session.execute(q.limit(1)).first() is None:
        return []
    out: list[str] = []
    for batch in _batches([r[0] for r in _runs_newest_first(session, runs_on, cpu_ok, committed, kind)]):
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
    """Valid stored rows of one run, as dicts (kept for the session: a run is read once however many claims,
    GPU rows and histories read it). Callers copy before changing a row."""
    memo = session.info.setdefault("claims_rows", {})
    key = (technique, metric, run_id)
    if key not in memo:
        q = _filtered(select(Result.value, Result.metric, Result.direction, Result.params, Benchmark.impl,
                             Benchmark.case_id, Run.id, Run.started_at, Environment.gpu_name, Environment.device),
                      technique, metric, None, None, committed=False).where(Run.id == run_id)
        memo[key] = [{"value": r[0], "metric": r[1], "direction": r[2], "params": r[3] or {}, "impl": r[4],
                      "case": r[5], "run_id": r[6], "started_at": r[7], "gpu_name": r[8], "device": r[9],
                      "technique": technique} for r in session.execute(q)]
    return [r for r in memo[key] if (impls is None or r["impl"] in impls) and (case is None or r["case"] == case)]


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
            committed: bool = True, run_id: str | None = None,
            kind: str | None = None) -> tuple[float, str, list[dict]] | None:
    """The selector's value from the latest matching run of GPU kind `kind` (or from run_id):
    (value, detail, evidence) or None."""
    impls = sel.impls() + sel.baselines()
    if run_id is None:
        run_id = latest_run_id(session, sel.technique, sel.metric, impls, sel.case, runs_on, sel.cpu_ok,
                               _need(sel), committed, kind)
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


def custom_measure(session: Session, chk: Custom, runs_on: tuple[str, ...], cpu_ok: bool | None = None,
                   committed: bool = True, kind: str | None = None):
    """A Custom check over the latest stored value of every (implementation, case) of its techniques
    (rows of chk.metric, if set) on matching hardware of GPU kind `kind`, all passed to its function
    together; a run of a subset of the implementations leaves the others' latest rows in place.
    (value, detail, evidence: one row per run used, status or None) or None."""
    cpu_ok = chk.cpu_ok if cpu_ok is None else cpu_ok
    memo = session.info.setdefault("claims_custom", {})
    key = (chk.techniques(), chk.metric, runs_on, cpu_ok, committed, kind)
    if key not in memo:  # checks of the same techniques and metric share what they read
        memo[key] = _latest_rows(session, chk, runs_on, cpu_ok, committed, kind)
    if memo[key] is None:
        return None
    rows, runs, used = memo[key]
    out = resolve(chk.target)(rows)
    if out is None:
        return None
    value, detail, status = (*out, None)[:3]
    return value, f"{'; '.join(sorted(runs))}: {detail}", list(used.values()), status


def _measured_where(session: Session, technique: str, metric, committed: bool) -> list[tuple]:
    """(impl, case, run id) of every valid row of technique (metric) in any run: one query per technique and
    metric, kept for the session and shared by every Custom check and GPU kind that reads them."""
    memo = session.info.setdefault("claims_where", {})
    key = (technique, metric, committed)
    if key not in memo:
        q = _filtered(select(Benchmark.impl, Benchmark.case_id, Run.id).distinct(), technique, metric, None, None,
                      committed)
        memo[key] = session.execute(q).all()
    return memo[key]


def _latest_rows(session: Session, chk: Custom, runs_on: tuple[str, ...], cpu_ok: bool, committed: bool,
                 kind: str | None):
    """(rows, run texts, runs used) of custom_measure, or None where a technique has no row."""
    rows, runs, used = [], set(), {}
    newest_first = _runs_newest_first(session, runs_on, cpu_ok, committed, kind)
    where = {r[0]: (_ts(r[1]), r[0], r[2] or "CPU", r[1]) for r in newest_first}
    for tech in chk.techniques():
        latest: dict[tuple[str, str], tuple] = {}
        for impl, case, run_id in _measured_where(session, tech, chk.metric, committed):
            w = where.get(run_id)
            if w is not None and ((impl, case) not in latest or w[:2] > latest[(impl, case)][:2]):
                latest[(impl, case)] = w
        if not latest:
            return None
        for run_id in {v[1] for v in latest.values()}:
            rows += [r for r in _rows(session, tech, chk.metric, None, None, run_id)
                     if latest[(r["impl"], r["case"])][1] == run_id]
        runs |= {f"{tech} run {v[1]} on {v[2]}" for v in latest.values()}
        for v in latest.values():
            used[(tech, v[1])] = {"technique": tech, "run_id": v[1], "started_at": str(v[3]), "gpu_name": v[2]}
    return rows, runs, used


def _measure(session: Session, chk, runs_on: tuple[str, ...], cpu_ok: bool | None = None, committed: bool = True,
             kind: str | None = None):
    """(value, detail, evidence, status or None) of a Selector or Custom check on kind `kind`, or None."""
    if isinstance(chk, Custom):
        return custom_measure(session, chk, runs_on, cpu_ok, committed, kind)
    if cpu_ok is False and chk.cpu_ok:
        chk = replace(chk, cpu_ok=False)
    got = measure(session, chk, runs_on, committed, kind=kind)
    return None if got is None else (*got, None)


def _uncommitted(session: Session, chk, runs_on: tuple[str, ...], cpu_ok: bool | None = None) -> str:
    """' (only runs without a git commit measure it: ...)' when such runs would decide it, else ''."""
    got = _measure(session, chk, runs_on, cpu_ok, committed=False)
    if got is None:
        return ""
    return (f"; needs a re-run from a commit: only runs without a git commit measure it, and they back no claim "
            f"({got[1][:160]})")


HISTORY = 5  # matching runs whose verdicts a benchmark claim's history holds


def history(session: Session, c: Claim, latest: float, limit: int = HISTORY, kind: str | None = None) -> list[dict]:
    """The band's verdict on each of the last `limit` matching runs of a Selector claim on GPU kind `kind`,
    newest first; `latest` is the value already measured on the newest of them (the row's status)."""
    sel = c.check
    if not isinstance(sel, Selector) or c.band is None:
        return []
    starts = {r[0]: r[1] for r in _runs_newest_first(session, c.runs_on, sel.cpu_ok, True, kind)}
    out = []
    # a window of 4 x limit runs: runs of another protocol version interleaved with the newest's are passed by
    ids = latest_run_ids(session, sel.technique, sel.metric, sel.impls() + sel.baselines(), sel.case, c.runs_on,
                         sel.cpu_ok, _need(sel), True, 4 * limit, kind)
    version = _timing_versions(session, sel.technique, sel.metric, ids)
    # two timing protocols are never one series: the history holds the newest run's protocol version only
    ids = [r for r in ids if version.get(r) == version.get(ids[0])][:limit] if ids else []
    for i, run_id in enumerate(ids):
        got = (latest,) if i == 0 else measure(session, sel, c.runs_on, True, run_id)
        if got is not None:
            out.append({"run_id": run_id, "started_at": str(starts.get(run_id)), "value": got[0],
                        "status": status_of(c, got[0])})
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


def status_of(c: Claim, value: float, override: str | None = None) -> str:
    """The band's verdict on value (or a status the check named); outside the band a claim whose measurement
    is confounded (confounded_by) is "confounded", never "contradicted" or "not reproduced"."""
    status = override or judge(value, c.band)
    if c.confounded_by and status in (CONTRADICTED, NOT_REPRODUCED):
        return CONFOUNDED
    return status


