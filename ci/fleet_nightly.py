"""The nightly through the fleet: one job per hardware label, then one report when every job of the
night is done or failed (a label with no worker is reported as not run when the wait ends)."""
from __future__ import annotations

import time
from pathlib import Path
from typing import Optional

from ci.fleet import jobs, submit
from ci.nightly import nightly
from db.engine import open_db
from db.series import run_document

FINISHED = ("done", "failed")


def fan_out(db: Optional[str], broker: Optional[str], labels: list[str], batch: str, spec: dict) -> list[str]:
    """One nightly job per label in `batch`; their ids."""
    return [submit(db, broker, label, spec, batch) for label in labels]


def wait(db: Optional[str], batch: str, timeout_s: float, poll_s: float = 5.0) -> list:
    """The batch's jobs once all are finished, or as they stand when timeout_s has passed."""
    deadline = time.monotonic() + timeout_s
    while True:
        rows = jobs(db, batch, limit=10_000)
        if (rows and all(j.status in FINISHED for j in rows)) or time.monotonic() >= deadline:
            return rows
        time.sleep(poll_s)


def report(db: Optional[str], batch: str, rows: list, out_dir: Path) -> int:
    """Each stored run's nightly report under out_dir/<label>/ and one nightly.md over the batch; exit code."""
    out_dir.mkdir(parents=True, exist_ok=True)
    parts, code = [f"# Nightly {batch}\n", "| label | job | status | run | error |", "|---|---|---|---|---|"], 0
    sections = []
    for j in sorted(rows, key=lambda j: j.label):
        err = " ".join((j.error or "").split())[:300] if j.status != "queued" else "no worker took it"
        parts.append(f"| {j.label} | `{j.id[:12]}` | {j.status} | `{(j.run_id or '')[:12]}` | {err} |")
        if j.status != "done":
            code = 1
            continue
        with open_db(db)() as s:
            doc = run_document(s, j.run_id)
        _, c = nightly(db, doc, out_dir / j.label, doc["run"]["config"].get("techniques") or None)
        code = max(code, c)
        sections.append(f"\n## {j.label}\n\n" + (out_dir / j.label / "nightly.md").read_text())
    (out_dir / "nightly.md").write_text("\n".join(parts) + "\n" + "".join(sections))
    return code
