"""Recall of an aligned needle over many seeds, per selector variant and context (the zeta check):
python -m suite.techniques.needle_retrieval.recall_sweep --device cuda --ctx 65536 131072 --seeds 20
--out zeta_recall.json"""
from __future__ import annotations

import argparse
import json
import time

import torch

from suite.lib.block_sparse import dense_block_mask
from suite.lib.selectors import SELECTOR_FUNCTIONS
from suite.techniques.needle_retrieval.common import haystack

# The selector as it stands, and zeta's single-curve form before the shifted curves.
VARIANTS = {"zeta_morton": ("zeta_morton", {}),
            "zeta_morton_one_curve": ("zeta_morton", {"shifts": 1, "window": 128}),
            "exact_topk": ("exact_topk", {})}


def recalled(variant: str, ctx: int, seed: int, device: str, depth: float = 0.37, strength: float = 8.0,
             block: int = 128, density: float = 0.1) -> bool:
    """Whether the variant keeps the needle's block for the question (1 KV head, 4 query heads, D 128)."""
    name, kw = VARIANTS[variant]
    h = haystack(ctx, depth, strength, block, 4, 1, 128, seed, device)
    num, idx = SELECTOR_FUNCTIONS[name](h["q"], h["k"], block, density, **kw)
    return bool(dense_block_mask(num, idx)[0, :, -1, h["needle"] // block].all())


def sweep(variants: list[str], ctxs: list[int], seeds: int, device: str) -> dict:
    """{variant: {ctx: {"k", "n", "missed_seeds"}}} over seeds 0..seeds-1."""
    out: dict = {"device": device, "gpu": torch.cuda.get_device_name() if device.startswith("cuda") else "cpu",
                 "seeds": seeds, "results": {}}
    t0 = time.time()
    for v in variants:
        for ctx in ctxs:
            missed = [s for s in range(seeds) if not recalled(v, ctx, s, device)]
            out["results"].setdefault(v, {})[str(ctx)] = {"k": seeds - len(missed), "n": seeds,
                                                          "missed_seeds": missed}
    out["wall_s"] = round(time.time() - t0, 1)
    return out


def main() -> None:
    """The command line: JSON to --out and a one-line summary per variant and context."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--ctx", type=int, nargs="+", default=[65536])
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=list(VARIANTS))
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    res = sweep(a.variants, a.ctx, a.seeds, a.device)
    for v, by_ctx in res["results"].items():
        for ctx, r in by_ctx.items():
            print(f"{res['gpu']} {v} ctx {ctx}: {r['k']} of {r['n']} (missed seeds {r['missed_seeds']})")
    if a.out:
        with open(a.out, "w") as f:
            json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
