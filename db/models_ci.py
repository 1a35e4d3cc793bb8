"""CI tables: mutes, change points, acknowledgements (re-baselines), gate reports and fleet jobs.

A series is identified by (technique, impl, case_id, metric, hardware_key, software_key, protocol);
protocol is "" when a result has none, so the key never holds NULL and unique constraints work.
"""
from __future__ import annotations

from datetime import datetime
from typing import Any, Optional

from sqlalchemy import DateTime, Float, ForeignKey, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from db.models import Base, Json


class Mute(Base):
    """A muted series pattern (None fields match anything) with who, why and until when."""

    __tablename__ = "ci_mutes"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    technique: Mapped[str] = mapped_column(String(128), index=True)
    impl: Mapped[Optional[str]] = mapped_column(String(128))
    case_id: Mapped[Optional[str]] = mapped_column(String(256))
    metric: Mapped[Optional[str]] = mapped_column(String(64))
    hardware_key: Mapped[Optional[str]] = mapped_column(String(16))
    who: Mapped[str] = mapped_column(String(128))
    why: Mapped[str] = mapped_column(Text)
    until: Mapped[Optional[datetime]] = mapped_column(DateTime(timezone=True))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class SeriesKeyColumns:
    """The seven columns naming a series (db.series.SeriesKey), shared by the tables below."""

    technique: Mapped[str] = mapped_column(String(128))
    impl: Mapped[str] = mapped_column(String(128))
    case_id: Mapped[str] = mapped_column(String(256))
    metric: Mapped[str] = mapped_column(String(64))
    hardware_key: Mapped[str] = mapped_column(String(16))
    software_key: Mapped[str] = mapped_column(String(16))
    protocol: Mapped[str] = mapped_column(String(64), default="")


class ChangePoint(SeriesKeyColumns, Base):
    """A change detected in a series' nightly history: the first run after the change."""

    __tablename__ = "ci_change_points"
    __table_args__ = (
        UniqueConstraint("technique", "impl", "case_id", "metric", "hardware_key", "software_key",
                         "protocol", "run_id", name="uq_change_point"),
        Index("ix_change_points_series", "technique", "impl", "case_id", "metric"),
    )
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    run_id: Mapped[str] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"))
    run_started_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    method: Mapped[str] = mapped_column(String(128))
    before_value: Mapped[Optional[float]] = mapped_column(Float)
    after_value: Mapped[Optional[float]] = mapped_column(Float)
    rel_change: Mapped[Optional[float]] = mapped_column(Float)  # (after - before) / before
    kind: Mapped[str] = mapped_column(String(16))  # regression | improvement | neutral
    detected_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    details: Mapped[dict[str, Any]] = mapped_column(Json, default=dict)


class Acknowledgement(SeriesKeyColumns, Base):
    """A person marks a change as intended: history before from_run is no longer the baseline."""

    __tablename__ = "ci_acknowledgements"
    __table_args__ = (Index("ix_acks_series", "technique", "impl", "case_id", "metric"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    from_run_id: Mapped[str] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"))
    from_started_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    change_point_id: Mapped[Optional[int]] = mapped_column(ForeignKey("ci_change_points.id", ondelete="SET NULL"))
    who: Mapped[str] = mapped_column(String(128))
    why: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class GateReport(Base):
    """One gate decision: the refs compared, the verdict and the full JSON report."""

    __tablename__ = "ci_gate_reports"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), index=True)
    baseline_ref: Mapped[str] = mapped_column(String(512))
    candidate_ref: Mapped[str] = mapped_column(String(512))
    baseline_run_id: Mapped[Optional[str]] = mapped_column(String(64))
    candidate_run_id: Mapped[Optional[str]] = mapped_column(String(64))
    verdict: Mapped[str] = mapped_column(String(16))  # pass | fail
    counts: Mapped[dict[str, Any]] = mapped_column(Json, default=dict)
    report: Mapped[dict[str, Any]] = mapped_column(Json, default=dict)


class FleetJob(Base):
    """One job of the runner fleet (ci.fleet): its selection and where it stands. The broker
    (RabbitMQ, through Celery) carries only the id; the state and the stored run are here."""

    __tablename__ = "fleet_jobs"
    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    batch: Mapped[str] = mapped_column(String(64), index=True)  # e.g. the night: nightly-2026-11-30
    label: Mapped[str] = mapped_column(String(64))  # hardware label = queue, e.g. h200
    spec: Mapped[dict[str, Any]] = mapped_column(Json, default=dict)  # tier, techniques, impls, cases, ref
    status: Mapped[str] = mapped_column(String(16), default="queued")  # queued | running | done | failed
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    worker: Mapped[Optional[str]] = mapped_column(String(128))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    started_at: Mapped[Optional[datetime]] = mapped_column(DateTime(timezone=True))
    finished_at: Mapped[Optional[datetime]] = mapped_column(DateTime(timezone=True))
    run_id: Mapped[Optional[str]] = mapped_column(String(64))
    error: Mapped[Optional[str]] = mapped_column(Text)
    # while running: the worker's lease, renewed as it runs; another worker takes the job only after it
    lease_until: Mapped[Optional[datetime]] = mapped_column(DateTime(timezone=True))
