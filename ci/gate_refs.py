"""Resolve a gate REF (result file, pytest-benchmark file, run id, branch or commit) to one run's rows."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from db.engine import NoDatabase, open_db, resolve_url
from db.ingest import load_any
from db.series import latest_run_id, run_document
from db.urls import mask_url
from runners.env import HARDWARE_KEYS, SOFTWARE_KEYS, key_of


class RefError(ValueError):
    """A REF that names no file and no stored run."""


@dataclass
class RunData:
    """One side of a comparison: the run header and its result rows (result-file shape)."""

    ref: str
    origin: str  # "file" | "database"
    run: dict
    rows: list[dict]
    hardware_key: str = ""
    software_key: str = ""
    extra: dict = field(default_factory=dict)

    @property
    def run_id(self) -> str:
        return self.run.get("id", "")

    def describe(self) -> str:
        git = self.run.get("git") or {}
        env = self.run.get("env") or {}
        where = env.get("gpu_name") or f"CPU {env.get('cpu') or '?'}"
        commit = (git.get("commit") or "?")[:10] + ("+dirty" if git.get("dirty") else "")
        return f"run {self.run_id[:12]} ({self.run.get('tier')}, {commit}, {where}, {self.run.get('started_at')})"


def load_document(path: str | Path) -> dict:
    """A validated schema-1 document from a KernelWatch result file or a pytest-benchmark JSON file,
    its rows as they recorded themselves (as ingest stores them)."""
    return load_any(path)[0]


def from_document(ref: str, doc: dict, origin: str) -> RunData:
    run = doc["run"]
    env = run.get("env") or {}
    hw = run.get("hardware_key") or key_of(env, HARDWARE_KEYS)
    sw = run.get("software_key") or key_of(env, SOFTWARE_KEYS)
    return RunData(ref, origin, run, doc["results"], hw, sw)


def resolve(ref: str, db_url: Optional[str] = None, tier: Optional[str] = None) -> RunData:
    """REF as a file path first, else a run id / commit / branch in the database (newest run)."""
    if Path(ref).is_file():
        return from_document(ref, load_document(ref), "file")
    try:
        factory = open_db(db_url, create=False)
    except NoDatabase as exc:
        raise RefError(f"{ref!r} is neither a file nor a run id, commit or branch: {exc}")
    with factory() as session:
        run_id = latest_run_id(session, ref, tier)
        if run_id is None:
            raise RefError(f"{ref!r} is neither a file nor a run id, commit or branch stored in "
                           f"{mask_url(resolve_url(db_url))}" + (f" (tier {tier})" if tier else ""))
        return from_document(ref, run_document(session, run_id), "database")
