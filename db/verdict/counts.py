"""Quality metrics as counts: k successes of n trials per result row, and needle grids pooled per cell group.

New rows carry `stats.k` and `stats.n` (written by the probes). Rows written before that get n
derived where the row says enough (below); otherwise n is unknown and the verdict says so.
"""
from __future__ import annotations

import math
import re
from typing import Optional

# A row whose params hold one of these sets of axes is one cell of a grid: the needle grid (depth x
# strength at a context) and the exponent sweep (exp_a x exp_b at a shape).
GRIDS = (("depth", "strength"), ("exp_a", "exp_b"))
assert all(len(axes) == 2 for axes in GRIDS)  # grid_axes tests two names
_CELL = re.compile(r"(_depth\d+.*|_ea[+-]?\d+_eb[+-]?\d+)$")


def _int(x) -> Optional[int]:
    return int(x) if isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) else None


def counts_of(row: dict) -> Optional[tuple[int, int]]:
    """(k, n) of a quality-fraction row, or None when n is unknown."""
    st, p, v = row.get("stats") or {}, row.get("params") or {}, row.get("value")
    k, n = _int(st.get("k")), _int(st.get("n"))
    if k is not None and n:  # written by the probe (timing rows have stats.n but no stats.k)
        return k, n
    if not isinstance(v, (int, float)) or not math.isfinite(v):
        return None
    metric = row.get("metric", "")
    n = None
    if metric.startswith("bf16_") and _int(p.get("points")):  # exp_approx probe: every point tested
        n = _int(p["points"])
    elif metric == "rescale_frac" and _int(st.get("kv_blocks")):
        return _int(st.get("rescales")) or 0, _int(st["kv_blocks"])
    elif metric == "max_grew_frac" and _int(st.get("kv_blocks")):
        return _int(st.get("grew")) or 0, _int(st["kv_blocks"])
    elif is_cell(row) or row.get("unit") == "bool":  # one trial: a grid cell, a probe point
        n = 1
    elif _int(st.get("sequences")) and _int(p.get("n_kv")):  # MQAR: n_kv queries per sequence
        n = _int(st["sequences"]) * _int(p["n_kv"])
    if not n:
        return None
    return int(round(v * n)), n


def grid_axes(row: dict) -> tuple[str, ...]:
    """The grid axes of a cell row, () for a row that is not a grid cell."""
    p = row.get("params")
    if not p:
        return ()
    for axes in GRIDS:
        if axes[0] in p and axes[1] in p:  # every grid has two axes
            return axes
    return ()


def is_cell(row: dict) -> bool:
    return bool(grid_axes(row))


def grid_case(case_id: str) -> str:
    """The case id of a grid's cell group: ctx16k_depth50_s4 -> ctx16k/grid, sweep_ea-140_eb+0 -> sweep/grid."""
    return _CELL.sub("", case_id) + "/grid"


def pool_grids(rows: list[dict], count_metric) -> list[dict]:
    """rows with every grid's ok cells pooled per (technique, impl, cell group, metric): counts summed
    for quality fractions (`count_metric(row)` says which), the cell values as samples for the others.
    Rows that are not grid cells, and failed cells, pass through unchanged."""
    out, groups = [], {}
    for r in rows:
        if not is_cell(r) or r.get("status") != "ok":
            out.append(r)
            continue
        groups.setdefault((r["technique"], r["impl"], grid_case(r["case"]), r["metric"]), []).append(r)
    for (tech, impl, case, metric), cells in groups.items():
        first = cells[0]
        params = {k: v for k, v in (first.get("params") or {}).items() if k not in grid_axes(first) + ("seed",)}
        params["cells"] = len(cells)
        stats = {k: v for k, v in (first.get("stats") or {}).items() if k == "protocol"}
        stats["cells"] = len(cells)
        vals = [c["value"] for c in cells if isinstance(c.get("value"), (int, float))]
        cnt = [counts_of(c) for c in cells] if count_metric(first) else []
        if cnt and all(cnt):
            k, n = sum(c[0] for c in cnt), sum(c[1] for c in cnt)
            value, samples = k / n, []
            stats.update(k=k, n=n)
        else:
            value, samples = (sum(vals) / len(vals) if vals else None), vals
        out.append({**first, "case": case, "params": params, "value": value, "samples": samples,
                    "stats": stats, "status": "ok", "error": None})
    return out
