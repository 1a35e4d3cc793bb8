"""Two GPUs side by side: every series of GPU A beside GPU B (absolute, share of each GPU's own
ceiling, speed ratio against what the two measured ceilings predict) and quality metrics compared
with the verdict's own tests (db.verdict), a quality difference being an alert."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Optional

from db.verdict import FAILING, Thresholds, judge, metric_kind, prepare
from db.verdict.rules import COUNT, ERROR, FRACTION, IMPROVED, REGRESSED, THROUGHPUT, TIMING
from db.verdict.stats import Z95, finite, median_ratio_ci
from suite.ceilings import BOUNDS, SHORT, ceilings_from_rows, datasheet_for, run_ceiling

QUALITY = (FRACTION, COUNT, ERROR)
SPEED = (TIMING, THROUGHPUT)


def gpu_of(doc: dict) -> str:
    """The run's GPU name ('NVIDIA H100 80GB HBM3'), or 'CPU <model>'."""
    env = doc["run"].get("env") or {}
    return env.get("gpu_name") or f"CPU {env.get('cpu') or '?'}"


def ceilings_of(doc: dict) -> dict:
    """{key: value} of the run's measured ceilings (the header's, else as its rows' shares recorded them)."""
    c = doc["run"].get("ceilings") or ceilings_from_rows(doc["results"])
    return {k: v["value"] for k, v in c.items() if k != "errors" and isinstance(v, dict)}


def predicting_ceilings(doc_a: dict, doc_b: dict) -> tuple[dict, dict, str]:
    """(A's, B's ceilings, basis) for the prediction: the datasheet peaks of both GPUs where both are in
    the table (a run's recorded ceiling is a measurement in older files and the datasheet bound in newer
    ones, and a ratio of one against the other predicts nothing), the runs' own for the rest (MUFU)."""
    ca, cb = ceilings_of(doc_a), ceilings_of(doc_b)
    sa, sb = datasheet_for(gpu_of(doc_a)), datasheet_for(gpu_of(doc_b))
    if not (sa and sb):
        return ca, cb, "the runs' measured ceilings"
    for c, sheet in ((ca, sa), (cb, sb)):
        c.update({k: sheet[k] for k in BOUNDS})
    return ca, cb, f"datasheet peaks ({sa['name']}, {sb['name']}); MUFU as measured"


@dataclass
class HardwareComparison:
    """Rows of two runs on two GPUs; `speed` and `quality` are lists of dicts, flagged/alerts first."""

    gpu_a: str
    gpu_b: str
    run_a: str
    run_b: str
    commit_a: str
    commit_b: str
    caption: str
    ceilings: dict  # key -> (A, B, B/A)
    speed: list = field(default_factory=list)
    quality: list = field(default_factory=list)

    @property
    def alerts(self) -> list:
        return [q for q in self.quality if q["alert"]]

    @property
    def flagged(self) -> list:
        return [s for s in self.speed if s["against"]]


def _key(r: dict) -> tuple:
    return r["technique"], r["impl"], r["case"], r["metric"]


def _ceiling_keys(rows: list[dict]) -> dict:
    """(technique, impl, case) -> the ceiling key its rate rows are a share of (latency rows share it)."""
    out = {}
    for r in rows:
        c = run_ceiling(r.get("stats"))
        if c:
            out.setdefault((r["technique"], r["impl"], r["case"]), c["key"])
    return out


def _speed_ci(a: dict, b: dict, th: Thresholds, speed: float) -> tuple[float, float]:
    """95% interval of B's speed over A's: the two runs' samples (median ratio CI) widened by the
    run-to-run spread of a GPU median (th.run_cv_gpu), as between two nights of one GPU."""
    sa, sb = finite(a.get("samples") or []), finite(b.get("samples") or [])
    if len(sa) >= th.min_samples and len(sb) >= th.min_samples and sa.min() > 0 and sb.min() > 0:
        lo, hi = median_ratio_ci(sa, sb, th.run_cv_gpu)  # of value B / value A
        return (1 / hi, 1 / lo) if a.get("direction") == "lower" else (lo, hi)
    half = math.exp(Z95 * math.sqrt(2) * th.run_cv_gpu)
    return speed / half, speed * half


def _speed_row(a: dict, b: dict, ckey: Optional[str], ca: dict, cb: dict, th: Thresholds) -> dict:
    va, vb = a["value"], b["value"]
    speed = (va / vb if a.get("direction") == "lower" else vb / va) if va and vb else math.nan
    pred = cb[ckey] / ca[ckey] if ckey and ckey in ca and ckey in cb and ca[ckey] else math.nan
    lo, hi = _speed_ci(a, b, th, speed) if math.isfinite(speed) else (math.nan, math.nan)
    vs = speed / pred if math.isfinite(pred) and math.isfinite(speed) else math.nan
    against = bool(math.isfinite(vs) and not lo <= pred <= hi and abs(math.log(vs)) >= math.log1p(th.min_effect))
    sh = lambda r: (run_ceiling(r.get("stats")) or {}).get("share")  # noqa: E731
    return {"technique": a["technique"], "impl": a["impl"], "case": a["case"], "metric": a["metric"],
            "unit": a.get("unit", ""), "a": va, "b": vb, "share_a": sh(a), "share_b": sh(b),
            "speed": speed, "speed_lo": lo, "speed_hi": hi, "bound_by": SHORT.get(ckey, ckey) if ckey else None,
            "predicted": pred, "vs_predicted": vs, "against": against,
            "note": ("" if not against else "slower than the ceilings predict" if vs < 1
                     else "faster than the ceilings predict")}


def _quality_row(a: dict, b: dict, th: Thresholds) -> dict:
    v = judge(a, b, th, other_machine=True)
    status_differs = a.get("status") != b.get("status")
    alert = status_differs or v.status in (REGRESSED, IMPROVED) or (v.status in FAILING and v.new_failure)
    side = "B higher" if v.status == (IMPROVED if v.direction == "higher" else REGRESSED) else "B lower"
    why = (f"status {a.get('status')} on A, {b.get('status')} on B" if status_differs else
           f"differs ({side}): {v.reason}" if v.status in (REGRESSED, IMPROVED) else
           f"{v.status} on B: {v.reason}" if alert else v.reason)
    return {"technique": a["technique"], "impl": a["impl"], "case": a["case"], "metric": a["metric"],
            "kind": v.kind, "a": a.get("value"), "b": b.get("value"), "k_a": v.k_baseline, "n_a": v.n_baseline,
            "k_b": v.k_candidate, "n_b": v.n_candidate, "p_value": v.p_value, "status_a": a.get("status"),
            "status_b": b.get("status"), "alert": bool(alert), "why": why}


def compare(doc_a: dict, doc_b: dict, th: Thresholds = Thresholds()) -> HardwareComparison:
    """Every series of run A (GPU A) beside run B (GPU B). At different commits only the series whose
    kernel version (impl_hash) is the same on both are compared, and the caption says so."""
    ra, rb = prepare(doc_a["results"]), prepare(doc_b["results"])
    by_b = {_key(r): r for r in rb}
    ca, cb, basis = predicting_ceilings(doc_a, doc_b)
    keys_a, keys_b = _ceiling_keys(ra), _ceiling_keys(rb)
    gita, gitb = (d["run"].get("git") or {} for d in (doc_a, doc_b))
    same = bool(gita.get("commit")) and gita.get("commit") == gitb.get("commit")
    speed, quality, skipped = [], [], 0
    for a in ra:
        b = by_b.get(_key(a))
        if b is None:
            continue
        if not same and a.get("impl_hash") != b.get("impl_hash"):
            skipped += 1
            continue
        kind = metric_kind(a["metric"], a.get("unit", ""))
        if kind in QUALITY or a.get("status") != b.get("status"):
            quality.append(_quality_row(a, b, th))
        elif kind in SPEED and a.get("status") == "ok" and a.get("value") and b.get("value"):
            tic = (a["technique"], a["impl"], a["case"])
            speed.append(_speed_row(a, b, keys_a.get(tic) or keys_b.get(tic), ca, cb, th))
    speed.sort(key=lambda s: (not s["against"], -abs(math.log(s["vs_predicted"])) if math.isfinite(s["vs_predicted"]) else 0))
    quality.sort(key=lambda q: (not q["alert"], q["technique"], q["impl"], q["case"], q["metric"]))
    ca_short, cb_short = (str(g.get("commit") or "?")[:7] for g in (gita, gitb))
    caption = (f"one commit, {ca_short}: every series" if same else
               f"commits differ ({ca_short} on A, {cb_short} on B): only the series whose kernel version "
               f"(impl hash) is the same on both ({len(speed) + len(quality)} compared, {skipped} left out)")
    caption += f"; predictions from {basis}"
    ceil = {k: (ca[k], cb[k], cb[k] / ca[k]) for k in ca if k in cb and ca[k]}
    return HardwareComparison(gpu_of(doc_a), gpu_of(doc_b), doc_a["run"]["id"], doc_b["run"]["id"],
                              gita.get("commit") or "", gitb.get("commit") or "", caption, ceil, speed, quality)


def gpu_runs(session, tier: str = "nightly") -> dict[str, list]:
    """{GPU name: [(run id, commit, started_at, techniques), newest first]} of the tier's GPU runs;
    techniques: how many techniques the run holds results of."""
    from sqlalchemy import distinct, func, select

    from db.models import Benchmark, Environment, Result, Run

    width = (select(Result.run_id, func.count(distinct(Benchmark.technique)).label("n"))
             .join(Benchmark, Result.benchmark_id == Benchmark.id).group_by(Result.run_id).subquery())
    q = (select(Run.id, Run.git_commit, Run.started_at, Environment.gpu_name, width.c.n)
         .join(Environment, Run.environment_id == Environment.id)
         .outerjoin(width, width.c.run_id == Run.id)
         .where(Run.tier == tier, Environment.gpu_name.is_not(None))
         .order_by(Run.started_at.desc(), Run.id.desc()))
    out: dict[str, list] = {}
    for rid, commit, started, gpu, n in session.execute(q):
        out.setdefault(gpu, []).append((rid, commit or "", started, n or 0))
    return out


def widest(runs: list) -> tuple:
    """The newest of the runs that hold the most techniques (a run of a few techniques, say the rest of
    an interrupted nightly, does not stand for the GPU when a whole nightly is stored)."""
    most = max(r[3] for r in runs)
    return next(r for r in runs if r[3] == most)


def _match(name: Optional[str], gpus: list[str], taken: str = "") -> str:
    if name is None:
        free = [g for g in gpus if g != taken]
        if not free:
            raise LookupError(f"need runs on two GPUs; stored: {gpus or 'none'}")
        return free[0]
    hits = [g for g in gpus if name.lower() in g.lower() and g != taken]
    if not hits:
        raise LookupError(f"no run on a GPU matching {name!r}; stored: {gpus}")
    return hits[0]


def pick(session, gpu_a: Optional[str] = None, gpu_b: Optional[str] = None, commit: Optional[str] = None,
         tier: str = "nightly", runs: Optional[dict] = None) -> tuple[str, str]:
    """(run A, run B): at `commit` on both GPUs; else at the newest commit both have run; else each
    GPU's newest run of the widest selection (widest; compared on the series whose impl hash matches).
    At a commit, each GPU's widest run there. GPUs by a part of their name, default the two GPUs with
    runs, in name order. `runs`: gpu_runs(session, tier) where the caller has read it already."""
    runs = gpu_runs(session, tier) if runs is None else runs
    names = sorted(runs)
    ga = _match(gpu_a, names)
    gb = _match(gpu_b, names, ga)
    ra, rb = runs[ga], runs[gb]
    if commit:
        at = lambda rs: [r for r in rs if r[1].startswith(commit.lower()) or r[0] == commit]  # noqa: E731
        if not at(ra) or not at(rb):
            raise LookupError(f"commit {commit} has no {tier} run on {ga if not at(ra) else gb}")
        return widest(at(ra))[0], widest(at(rb))[0]
    commits_b = {r[1] for r in rb if r[1]}
    common = next((r for r in ra if r[1] in commits_b), None)
    if common is not None:
        same = lambda rs: [r for r in rs if r[1] == common[1]]  # noqa: E731
        return widest(same(ra))[0], widest(same(rb))[0]
    return widest(ra)[0], widest(rb)[0]


def load(session, gpu_a: Optional[str] = None, gpu_b: Optional[str] = None, commit: Optional[str] = None,
         tier: str = "nightly", th: Thresholds = Thresholds(), runs: Optional[dict] = None) -> HardwareComparison:
    """pick() then compare() on the two stored runs."""
    from db.series import run_document

    a, b = pick(session, gpu_a, gpu_b, commit, tier, runs)
    return compare(run_document(session, a), run_document(session, b), th)
