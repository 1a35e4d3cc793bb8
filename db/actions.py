"""Writes a person makes (the CLI's `kwatch ack`, the dashboard's acknowledge and mute forms), with who made them."""
from __future__ import annotations

from datetime import datetime, timezone
from typing import Optional

from sqlalchemy.orm import Session

from db.models_ci import Acknowledgement, ChangePoint, Mute


def acknowledge(session: Session, change_point_id: int, who: str, why: str) -> int:
    """Mark a stored change as intended: the series is re-baselined from that change's run; the new
    acknowledgement's id."""
    c = session.get(ChangePoint, change_point_id)
    if c is None:
        raise KeyError(f"no change point {change_point_id}")
    a = Acknowledgement(technique=c.technique, impl=c.impl, case_id=c.case_id, metric=c.metric,
                        hardware_key=c.hardware_key, software_key=c.software_key, protocol=c.protocol,
                        from_run_id=c.run_id, from_started_at=c.run_started_at, change_point_id=c.id, who=who,
                        why=why, created_at=datetime.now(timezone.utc))
    session.add(a)
    session.flush()
    return a.id


def mute(session: Session, technique: str, impl: Optional[str], case_id: Optional[str], metric: Optional[str],
         hardware_key: Optional[str], who: str, why: str, until: datetime) -> int:
    """Mute a series pattern (None fields match anything) until `until`: the gate and the detector list
    it without failing; the new mute's id."""
    m = Mute(technique=technique, impl=impl, case_id=case_id, metric=metric, hardware_key=hardware_key, who=who,
             why=why, until=until, created_at=datetime.now(timezone.utc))
    session.add(m)
    session.flush()
    return m.id


def ack_covers(ack_from_started: datetime, ack_change_point_id: Optional[int], cp_started: datetime,
               cp_id: int) -> bool:
    """Whether an acknowledgement covers a stored change point (times aware, UTC): the change point's run
    started no later than the run the acknowledgement re-baselines from, and the acknowledgement names
    that change point or none."""
    return cp_started <= ack_from_started and (ack_change_point_id is None or int(ack_change_point_id) == int(cp_id))
