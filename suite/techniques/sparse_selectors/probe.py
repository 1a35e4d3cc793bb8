"""Extra metrics for a selector: block recall and attention-mass recall against exact top-k."""
from __future__ import annotations

import torch

from suite.lib.block_sparse import budget_counts, dense_block_mask, topk_blocks
from suite.lib.selectors import block_mass, select
from suite.spec import resolve
from suite.techniques.sparse_selectors import TECHNIQUE


def probe(fn, case, device: str, seed: int) -> list[dict]:
    """recall (selected blocks among the exact top-k) and mass_recall (true attention mass
    captured / mass the exact top-k captures), on one fresh seed; the selector's own time is
    the technique's latency_ms."""
    name = fn.keywords["selector"]  # the variant: the mask with its selector bound
    inp = resolve(TECHNIQUE.make_inputs)(case.params, seed + 20_000, device)
    q, k, blk, dens = inp["q"], inp["k"], inp["block"], inp["density"]
    mass = block_mass(q, k, blk)
    nb = k.shape[2] // blk
    exact = dense_block_mask(*topk_blocks(mass, budget_counts(nb, nb, dens, q.device)))
    mine = dense_block_mask(*select(name, q, k, blk, dens))
    found, wanted = int((mine & exact).sum()), int(exact.sum())
    recall = found / wanted
    mass_recall = float((mass * mine).sum() / (mass * exact).sum())
    return [{"metric": "recall", "unit": "1", "direction": "higher", "value": recall,
             "stats": {"k": found, "n": wanted}},
            {"metric": "mass_recall", "unit": "1", "direction": "higher", "value": mass_recall}]
