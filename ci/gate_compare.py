"""Pair a candidate run's series with the baseline's; each pair is judged by db.verdict.judge."""
from __future__ import annotations

from typing import Optional

from ci.gate_refs import RunData
from db.series import SeriesKey, key_of_row
from db.verdict import SEVERITY, Verdict, prepare
from db.verdict.identity import same_judged
from db.verdict.pairing import pair

SeriesVerdict = Verdict  # the gate's name for a verdict that carries its SeriesKey
__all__ = ["SEVERITY", "SeriesVerdict", "pair_rows"]


def pair_rows(base: RunData, cand: RunData) -> tuple[list[tuple[SeriesKey, Optional[dict], dict, bool]], list[SeriesKey]]:
    """Candidate rows (grids pooled) with their same-fingerprint baseline rows (None, and whether the
    baseline has the benchmark elsewhere); and baseline keys absent in the candidate. Runs of the same judged
    hardware and software (db.verdict.identity: a CPU string or Python patch version apart) pair as one."""
    same = same_judged(base.run.get("env") or {}, cand.run.get("env") or {})
    # one identity for both: the baseline's keys, which the learned spreads (db.verdict.spread) know it by
    chw, csw = (base.hardware_key, base.software_key) if same else (cand.hardware_key, cand.software_key)
    paired, bmap = pair(prepare(base.rows), prepare(cand.rows),
                        lambda r: key_of_row(r, base.hardware_key, base.software_key),
                        lambda r: key_of_row(r, chw, csw),
                        lambda k: (k.subject, k.hardware_key, k.software_key))
    subjects = {k.subject for k in bmap}
    pairs = [(k, b, r, b is None and k.subject in subjects) for k, b, r in paired]
    seen = {k.subject for k, _, _ in paired}
    dropped = [k for k in bmap if k.subject not in seen]
    return pairs, dropped
