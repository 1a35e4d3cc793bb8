"""The nightly through the fleet: one job per hardware label (default every GPU label of the fleet),
then one report when every job of the night is done or failed (a label whose queue no worker has
listened to for --unserved-after seconds is reported as not run without waiting out the timeout):
each label's nightly, and the GPUs side by side (db/hardware.py), a quality metric that differs
between two GPUs failing the night like a regression."""
from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Optional

from ci.fleet import jobs, listeners, queue_of, submit
from ci.nightly import nightly
from db.engine import open_db
from db.hardware import compare
from db.series import run_document

FINISHED = ("done", "failed")
LABELS = ("h100", "h200")  # every GPU label of the fleet: each runs the same nightly


def fan_out(db: Optional[str], broker: Optional[str], labels: Optional[list[str]], batch: str, spec: dict) -> list[str]:
    """One nightly job per label in `batch` (labels empty or None: every label in LABELS); their ids."""
    return [submit(db, broker, label, spec, batch) for label in (labels or LABELS)]


def across(docs: dict[str, dict]) -> tuple[str, int]:
    """Markdown of each pair of labels' runs side by side (quality alerts listed) and the exit code:
    1 when a quality metric differs between two GPUs."""
    labels, parts, code = sorted(docs), [], 0
    for i, la in enumerate(labels):
        for lb in labels[i + 1:]:
            c = compare(docs[la], docs[lb])
            parts.append(f"\n## Across GPUs: {la} ({c.gpu_a}) beside {lb} ({c.gpu_b})\n\n{c.caption}. "
                         f"Ceilings {lb}/{la}: " + ", ".join(f"{k} {r:.3f}" for k, (_, _, r) in c.ceilings.items())
                         + f". {len(c.flagged)} of {len(c.speed)} series move against the ceilings' prediction "
                         f"beyond their noise; {len(c.alerts)} quality alert(s) of {len(c.quality)} series.\n")
            if c.alerts:
                code = 1
                parts.append(f"| technique | impl | case | metric | {la} | {lb} | why |\n|---|---|---|---|---|---|---|")
                for q in c.alerts:
                    ka = f"{q['k_a']}/{q['n_a']}" if q["k_a"] is not None else q["a"]
                    kb = f"{q['k_b']}/{q['n_b']}" if q["k_b"] is not None else q["b"]
                    parts.append(f"| {q['technique']} | {q['impl']} | {q['case']} | {q['metric']} | {ka} | {kb} | "
                                 f"{' '.join(q['why'].split())[:200]} |")
    return "\n".join(parts) + ("\n" if parts else ""), code


def wait(db: Optional[str], batch: str, timeout_s: float, poll_s: float = 5.0, broker: Optional[str] = None,
         unserved_s: float = 300.0) -> tuple[list, set[str]]:
    """The batch's jobs once every one is finished or still queued on a label no worker has listened to for
    unserved_s seconds (asked of the broker), or as they stand when timeout_s has passed; and those labels."""
    deadline, start = time.monotonic() + timeout_s, time.monotonic()
    heard: dict[str, float] = {}  # label -> when a worker last listened to its queue (or the wait began)
    shown = None
    while True:
        rows = jobs(db, batch, limit=10_000)
        t = time.monotonic()
        unserved = set()
        for label in {j.label for j in rows if j.status == "queued"}:
            n = listeners(broker, label)
            if n is None or n > 0:
                heard[label] = t
            elif t - heard.get(label, start) >= unserved_s:
                unserved.add(label)
        pending = [j for j in rows if j.status not in FINISHED and j.label not in unserved]
        state = ", ".join(f"{j.label} {j.status}" + (" (no worker listens)" if j.label in unserved else "")
                          for j in sorted(rows, key=lambda j: j.label))
        if state != shown:  # a line on stderr whenever a job's state changes: the wait may last hours
            print(f"nightly-fleet: {int(t - start)} s: {state or 'no jobs yet'}", file=sys.stderr, flush=True)
            shown = state
        if (rows and not pending) or t >= deadline:
            return rows, unserved
        time.sleep(poll_s)


def report(db: Optional[str], batch: str, rows: list, out_dir: Path, unserved: frozenset = frozenset()) -> int:
    """Each stored run's nightly report under out_dir/<label>/ and one nightly.md over the batch (labels in
    unserved: no worker listened to their queue); exit code."""
    out_dir.mkdir(parents=True, exist_ok=True)
    parts, code = [f"# Nightly {batch}\n", "| label | job | status | run | error |", "|---|---|---|---|---|"], 0
    sections, docs = [], {}
    for j in sorted(rows, key=lambda j: j.label):
        err = " ".join((j.error or "").split())[:300] if j.status != "queued" else "no worker took it" + (
            f" (no worker listens on {queue_of(j.label)})" if j.label in unserved else "")
        parts.append(f"| {j.label} | `{j.id[:12]}` | {j.status} | `{(j.run_id or '')[:12]}` | {err} |")
        if j.status != "done":
            code = 1
            continue
        with open_db(db)() as s:
            doc = run_document(s, j.run_id)
        docs[j.label] = doc
        _, c = nightly(db, doc, out_dir / j.label, doc["run"]["config"].get("techniques") or None)
        code = max(code, c)
        sections.append(f"\n## {j.label}\n\n" + (out_dir / j.label / "nightly.md").read_text())
    side, c = across(docs)
    code = max(code, c)
    (out_dir / "nightly.md").write_text("\n".join(parts) + "\n" + side + "".join(sections))
    return code
