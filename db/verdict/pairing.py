"""Which baseline row a candidate row is judged against: the same series key, or for a failed
candidate row (failed rows carry no timing protocol) the baseline row of the same subject."""
from __future__ import annotations

from typing import Callable, Hashable, Optional

FAILED_ROW = ("error", "failed_correctness", "skipped")


Key = Callable[[dict], Hashable]


def pair(base_rows: list[dict], cand_rows: list[dict], base_key: Key, cand_key: Key,
         subject_of: Callable[[Hashable], Hashable]) -> tuple[list[tuple[Hashable, Optional[dict], dict]], dict]:
    """[(key, baseline row or None, candidate row)] in candidate order, and the baseline rows by key."""
    bmap = {base_key(r): r for r in base_rows}
    by_subject: dict = {}
    for k in bmap:
        by_subject.setdefault(subject_of(k), k)
    out = []
    for r in cand_rows:
        k = cand_key(r)
        b = bmap.get(k)
        if b is None and r["status"] in FAILED_ROW and subject_of(k) in by_subject:
            k = by_subject[subject_of(k)]
            b = bmap[k]
        out.append((k, b, r))
    return out, bmap
