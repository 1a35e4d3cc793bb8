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
Per GPU: a claim is judged separately on each GPU kind that measured it (one ledger row each, the kind
named in `gpu`); a figure measured on one kind never stands for another, and the history, the analog and
every text ("{gpu}" in a claim's wording) are the row's own kind's. A claim whose source names hardware
(runs_on) is judged on that kind only; our other GPUs' figures appear beside it as "other hardware".
CPU runs are their own kind, judged only where a check says numerics are the same there (cpu_ok).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from sqlalchemy.orm import Session

from db.claims_rows import (CPU, HISTORY, _history_text, _measure, _uncommitted, custom_measure, gpu_kind,  # noqa: F401
                            hardware_seen, history, kinds_seen, latest_run_id, latest_run_ids, measure, on_gpu,
                            status_of)
from suite.claims.projections import OURS
from suite.claims.spec import (CONFOUNDED, NOT_ON_OUR_HARDWARE, PENDING, Arithmetic, Claim, Custom, Projection,
                               Selector, judge)
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
    gpu: str = ""  # the GPU kind ("H200", "H100", "CPU") the value was measured on; "" for none
    analog_gpu: str = ""  # the kind the analog was measured on
    others: list[dict] = field(default_factory=list)  # other hardware: gpu, value, unit, detail, run_id, started_at

    @property
    def unsettled(self) -> bool:
        """The band's verdicts on the last matching runs disagree."""
        return len({h["status"] for h in self.history}) > 1

    def row(self) -> dict[str, Any]:
        """A flat, JSON-ready dict (the dashboard's and `kwatch claims --format json`'s row); "{gpu}" in the
        claim's texts reads as the row's GPU kind."""
        c = self.claim
        p = self.projection
        own = lambda text: on_gpu(text, self.gpu)
        return {
            "id": c.id, "gpu": self.gpu, "statement": own(c.statement), "figure": c.figure_text(), "unit": c.unit,
            "source": c.source, "url": c.url, "measured_by": c.measured_by, "hardware": c.hardware,
            "section": c.section, "technique": c.technique, "recalled": c.recalled, "note": own(c.note),
            "check": _check_kind(c), "quantity": own(c.quantity), "confounded_by": c.confounded_by,
            "band": c.band.describe() if c.band else None, "status": self.status, "value": self.value,
            "detail": self.detail, "evidence": self.evidence,
            "projection": None if p is None else {**asdict(p), "label": "projection"},
            "analog": self.analog, "analog_unit": on_gpu(c.analog_unit, self.analog_gpu),
            "analog_detail": self.analog_detail, "analog_gpu": self.analog_gpu, "others": self.others,
            "history": self.history, "unsettled": self.unsettled,
        }


def _check_kind(c: Claim) -> str:
    return {Arithmetic: "arithmetic", Selector: "benchmark", Custom: "benchmark"}.get(type(c.check), "none")


# ---------------------------------------------------------------- the ledger
def _like(c: Claim, session: Session) -> list[str]:
    """The GPU kinds whose runs judge the claim: its runs_on kinds where it names hardware, else every GPU
    kind (and CPU where its check says numerics are the same there)."""
    cpu_ok = isinstance(c.check, (Selector, Custom)) and c.check.cpu_ok
    return kinds_seen(session, c.runs_on, cpu_ok)


def _others(session: Session, c: Claim, chk, skip: list[str]) -> list[dict]:
    """Our figure for chk on each GPU kind not in skip, labelled with its kind (never the claim's status)."""
    out = []
    for k in kinds_seen(session, (), False):
        if k in skip:
            continue
        got = _measure(session, chk, (), cpu_ok=False, kind=k)
        if got:
            ev = got[2][:1] or [{}]
            out.append({"gpu": k, "value": got[0], "unit": on_gpu(c.analog_unit or c.unit, k), "detail": got[1],
                        "run_id": ev[0].get("run_id"), "started_at": ev[0].get("started_at")})
    return out


def _pending(session: Session, c: Claim) -> Verdict:
    """The pending row of a benchmark claim no stored run measures."""
    if isinstance(c.check, Custom):
        what = " / ".join(c.check.techniques()) + (f" {c.check.metric}" if c.check.metric else "")
    else:
        what = (f"{c.check.technique} {c.check.metric} of {', '.join(c.check.impls())}"
                + (f" (with {', '.join(c.check.baselines())})" if c.check.baselines() else "")
                + (f", case {c.check.case}" if c.check.case else ""))
    hw = " / ".join(c.runs_on) if c.runs_on else ("any hardware" if c.check.cpu_ok else "any GPU")
    return Verdict(c, PENDING, detail=f"no stored result yet: {what} on {hw}"
                   + _uncommitted(session, c.check, c.runs_on))


def evaluate_claim(session: Session, c: Claim, seen: list[str] | None = None) -> list[Verdict]:
    """A claim's verdicts against the stored results, one per GPU kind that measured it (see the module
    docstring for the rule)."""
    if isinstance(c.check, Arithmetic):
        value, detail = resolve(c.check.target)(**c.check.kwargs)
        return [Verdict(c, judge(value, c.band), value, detail)]
    like = _like(c, session) if c.runs_on else []
    if c.runs_on and not like:
        seen = hardware_seen(session) if seen is None else seen
        v = Verdict(c, NOT_ON_OUR_HARDWARE, detail=f"no stored run on {' / '.join(c.runs_on)}; "
                    f"hardware seen: {', '.join(seen) or 'none'}")
        if c.analog is not None:
            v.others = _others(session, c, c.analog, [])
            # projections scale from our reference GPU's figure; that figure is the row's analog
            mine = [o for o in v.others if o["gpu"] == OURS] or v.others[:1]
            if mine:
                v.analog, v.analog_detail, v.analog_gpu = mine[0]["value"], mine[0]["detail"], mine[0]["gpu"]
            else:
                v.detail += _uncommitted(session, c.analog, (), cpu_ok=False)
        if c.projection:
            v.projection = resolve(c.projection)(v.analog)
        return [v]
    if c.check is None:
        v = Verdict(c, PENDING, detail="no benchmark in this suite measures it" + (f": {c.note}" if c.note else ""))
        if c.analog is not None:
            v.others = _others(session, c, c.analog, [])
        return [v]
    out = []
    for k in like or _like(c, session):
        got = _measure(session, c.check, c.runs_on, kind=k)
        if got is None:
            continue
        value, detail, evidence, override = got
        h = history(session, c, value, kind=k)
        status = status_of(c, value, override)
        if status == CONFOUNDED and c.confounded_by:
            detail += f"; confounded: {c.confounded_by}"
        out.append(Verdict(c, status, value, detail + _history_text(h), evidence, history=h, gpu=k))
    if not out:
        return [_pending(session, c)]
    if c.runs_on:
        out[0].others = _others(session, c, c.analog or c.check, like)
    return out


def evaluate(session: Session, claims: list[Claim] | None = None) -> list[Verdict]:
    """Verdicts for `claims` (default: every claim of the suite), in ledger order, one per claim and GPU kind."""
    if claims is None:
        from suite.claims.registry import all_claims

        claims = all_claims()
    seen = hardware_seen(session)
    out = []
    for c in claims:
        try:
            out += evaluate_claim(session, c, seen)
        except Exception as exc:  # one broken check must not hide the rest of the ledger
            session.rollback()  # PostgreSQL refuses further queries in a failed transaction
            out.append(Verdict(c, PENDING, detail=f"the check failed: {type(exc).__name__}: {str(exc)[:300]}"))
    return out


def ledger(url: str | None = None, claims: list[Claim] | None = None) -> list[dict[str, Any]]:
    """The whole ledger as flat dicts (see Verdict.row), read-only: the dashboard's query."""
    from db.queries import read_engine  # pandas, which the CLI's ledger does not need

    with Session(read_engine(url)) as session:
        return [v.row() for v in evaluate(session, claims)]
