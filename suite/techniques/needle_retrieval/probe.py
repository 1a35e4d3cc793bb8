"""The needle grid: depth (11 steps, 0..100%) x strength at the case's context, one row per cell
and metric, case ids like ctx16k_depth50_s4 (the selector is the implementation). Each cell is an
independent trial: its own haystack and question from a seed derived from the run's seed and the
cell, so "k of n cells" counts n draws, not one draw n times."""
from __future__ import annotations

import zlib

from suite.lib.block_sparse import dense_block_mask
from suite.lib.block_sparse_kernel import block_sparse_attention
from suite.techniques.needle_retrieval.common import dense_question, haystack, score_cell
from suite.lib.selectors import select

DEPTHS = tuple(i / 10 for i in range(11))
_UNITS = {"recall": "1", "fidelity_cos": "1", "retrieval": "1"}


def cell_id(ctx: int, depth: float, strength: float) -> str:
    """Stable grid-cell id, e.g. ctx16k_depth50_s4 (strength -2 -> sm2)."""
    s = f"{strength:g}".replace("-", "m")
    return f"ctx{ctx // 1024}k_depth{round(depth * 100)}_s{s}"


def cell_seed(seed: int, ctx: int, depth: float, strength: float) -> int:
    """The cell's own seed: a stable hash (crc32, the same in every process) of the run's seed and
    the cell id; every selector sees the same haystack in a cell."""
    return zlib.crc32(f"{seed}:{cell_id(ctx, depth, strength)}".encode()) & 0x7FFFFFFF


def run_cell(selector: str, p: dict, depth: float, strength: float, seed: int, device: str) -> dict:
    """One grid cell: haystack, selection, sparse and dense outputs, its three metrics."""
    h = haystack(p["ctx"], depth, strength, p["block"], p["hq"], p["hkv"], p["d"], seed, device)
    num, idx = select(selector, h["q"], h["k"], p["block"], p["density"])
    out = block_sparse_attention(h["q"], h["k"], h["v"], num, idx, p["block"])
    chosen = dense_block_mask(num, idx)[0, :, -1, h["needle"] // p["block"]].all()
    return score_cell(out, dense_question(h["q"], h["k"], h["v"], "fp32"), h["v"], h["needle"],
                      bool(chosen))


def probe(fn, case, device: str, seed: int) -> list[dict]:
    selector = fn.keywords["selector"]  # the variant: the pipeline with its selector bound
    p = case.params
    rows = []
    for strength in p["strengths"]:
        for depth in DEPTHS:
            own = cell_seed(seed, p["ctx"], depth, strength)
            cell = run_cell(selector, p, depth, strength, own, device)
            for metric, value in cell.items():
                hits = {"k": int(value), "n": 1} if metric in ("recall", "retrieval") else {}  # one trial
                rows.append({"metric": metric, "unit": _UNITS[metric], "direction": "higher",
                             "value": value, "case": cell_id(p["ctx"], depth, strength), "stats": hits,
                             "params": {"ctx": p["ctx"], "depth": depth, "strength": strength,
                                        "seed": own, "base_seed": seed}})
    return rows
