"""SQLAlchemy 2.0 models: environments, runs, benchmarks (technique+impl+case), results."""
from __future__ import annotations

from datetime import datetime
from typing import Any, Optional

from sqlalchemy import (JSON, Boolean, DateTime, Float, ForeignKey, Index, Integer, LargeBinary, String, Text,
                        UniqueConstraint)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

Json = JSON().with_variant(JSONB(), "postgresql")


class Base(DeclarativeBase):
    pass


class Environment(Base):
    """One hardware + software fingerprint; many runs share it."""

    __tablename__ = "environments"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    fingerprint: Mapped[str] = mapped_column(String(64), unique=True)
    hardware_key: Mapped[str] = mapped_column(String(16), index=True)
    software_key: Mapped[str] = mapped_column(String(16), index=True)
    device: Mapped[str] = mapped_column(String(16))
    gpu_name: Mapped[Optional[str]] = mapped_column(String(128))
    compute_capability: Mapped[Optional[str]] = mapped_column(String(16))
    driver: Mapped[Optional[str]] = mapped_column(String(64))
    cuda: Mapped[Optional[str]] = mapped_column(String(32))
    torch: Mapped[Optional[str]] = mapped_column(String(64))
    triton: Mapped[Optional[str]] = mapped_column(String(64))
    python: Mapped[Optional[str]] = mapped_column(String(32))
    cpu: Mapped[Optional[str]] = mapped_column(String(256))
    raw: Mapped[dict[str, Any]] = mapped_column(Json)

    @property
    def hardware_label(self) -> str:
        return self.gpu_name or f"CPU {self.cpu}"


class Run(Base):
    """One execution of the suite (or an imported benchmark file)."""

    __tablename__ = "runs"
    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    started_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), index=True)
    finished_at: Mapped[Optional[datetime]] = mapped_column(DateTime(timezone=True))
    tier: Mapped[str] = mapped_column(String(32))
    reason: Mapped[str] = mapped_column(String(64))
    source: Mapped[str] = mapped_column(String(32), default="kwatch")
    git_commit: Mapped[Optional[str]] = mapped_column(String(64), index=True)
    git_branch: Mapped[Optional[str]] = mapped_column(String(256))
    git_dirty: Mapped[Optional[bool]] = mapped_column(Boolean)
    git_date: Mapped[Optional[datetime]] = mapped_column(DateTime(timezone=True))  # committer date
    environment_id: Mapped[int] = mapped_column(ForeignKey("environments.id"), index=True)
    content_hash: Mapped[str] = mapped_column(String(64))
    config: Mapped[dict[str, Any]] = mapped_column(Json, default=dict)
    ingested_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    environment: Mapped[Environment] = relationship()
    results: Mapped[list["Result"]] = relationship(back_populates="run", cascade="all, delete-orphan")


class Benchmark(Base):
    """A series' subject: technique + implementation + case (stable ids)."""

    __tablename__ = "benchmarks"
    __table_args__ = (UniqueConstraint("technique", "impl", "case_id", name="uq_benchmark"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    technique: Mapped[str] = mapped_column(String(128), index=True)
    impl: Mapped[str] = mapped_column(String(128))
    case_id: Mapped[str] = mapped_column(String(256))
    params: Mapped[dict[str, Any]] = mapped_column(Json, default=dict)


class Result(Base):
    """One metric of one benchmark in one run, with raw samples and summary stats."""

    __tablename__ = "results"
    __table_args__ = (
        Index("ix_results_series", "benchmark_id", "metric", "run_id"),
        Index("ix_results_run", "run_id", "status"),
    )
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    run_id: Mapped[str] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"))
    benchmark_id: Mapped[int] = mapped_column(ForeignKey("benchmarks.id"))
    metric: Mapped[str] = mapped_column(String(64))
    unit: Mapped[str] = mapped_column(String(32))
    direction: Mapped[str] = mapped_column(String(8))
    value: Mapped[Optional[float]] = mapped_column(Float)
    status: Mapped[str] = mapped_column(String(32))
    error: Mapped[Optional[str]] = mapped_column(Text)
    impl_version: Mapped[Optional[int]] = mapped_column(Integer)
    impl_hash: Mapped[Optional[str]] = mapped_column(String(64))
    protocol: Mapped[Optional[str]] = mapped_column(String(64))
    params: Mapped[dict[str, Any]] = mapped_column(Json, default=dict)
    samples: Mapped[list[Any]] = mapped_column(Json, default=list)
    samples_f64: Mapped[Optional[bytes]] = mapped_column(LargeBinary)  # the samples as db.samples.pack bytes
    stats: Mapped[dict[str, Any]] = mapped_column(Json, default=dict)
    run: Mapped[Run] = relationship(back_populates="results")
    benchmark: Mapped[Benchmark] = relationship()


from db import models_ci  # noqa: E402,F401  (CI tables join Base.metadata for Alembic)
