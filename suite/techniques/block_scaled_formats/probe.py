"""Per format and tensor: storage bits per element (scales included), the share of nonzero inputs
decoded to zero (the collapse a coarse scale causes), and the error over the non-outlier channels."""
from __future__ import annotations

import torch

from suite.techniques.block_scaled_formats.formats import FORMATS
from suite.techniques.block_scaled_formats.reference import make_inputs, outlier_columns


def probe(fn, case, device: str, seed: int) -> list[dict]:
    """Rows: bits_per_elem, zero_frac and (outlier tensors) rel_err_bulk, each over the case's seeds."""
    p = case.params
    fmt = FORMATS[fn.keywords["fmt"]]
    zero, counts, bulk = [], [], []
    for s in range(seed, seed + case.seeds):
        x = make_inputs(p, s, device)["x"]
        out = torch.empty_like(x)
        fn(out, x=x)
        nz = x != 0
        k, n = ((out == 0) & nz).sum().item(), nz.sum().item()
        zero.append(k / max(1, n))
        counts.append({"k": k, "n": n})
        keep = ~outlier_columns(p, s, device)
        if not keep.all():
            xb, ob = x[:, keep].double(), out[:, keep].double()
            bulk.append((torch.linalg.vector_norm(ob - xb) / torch.linalg.vector_norm(xb)).item())
    rows = [{"metric": "bits_per_elem", "unit": "bit", "direction": "lower",
             "value": fmt.bits(p["rows"], p["cols"]), "stats": {"scale": fmt.scale, "block": fmt.block}},
            {"metric": "zero_frac", "unit": "1", "direction": "lower", "value": max(zero), "samples": zero,
             "stats": counts[zero.index(max(zero))]}]  # k of n values of the worst seed
    if bulk:
        rows.append({"metric": "rel_err_bulk", "unit": "1", "direction": "lower", "value": max(bulk),
                     "samples": bulk, "stats": {"over": "the non-outlier channels"}})
    return rows
