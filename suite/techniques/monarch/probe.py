"""Per form: its parameter count; beside the Monarch form (on cases marked `project`), the relative
Frobenius error of the nearest Monarch to dense matrices of several kinds (fp64, on the CPU)."""
from __future__ import annotations

import torch

from suite.techniques.monarch.projection import KINDS, projection_error, dense_matrix
from suite.techniques.monarch.structured import parameters

PROJ_N, PROJ_NB = 1024, 32


def probe(fn, case, device: str, seed: int) -> list[dict]:
    """Rows: params_count; with case.params["project"] and the Monarch form, proj_rel_err per kind."""
    p, form = case.params, fn.keywords["form"]
    count = parameters(form, p["n"], p["nb"])
    rows = [{"metric": "params_count", "unit": "1", "direction": "lower", "value": float(count),
             "stats": {"share_of_dense": count / p["n"] ** 2}}]
    if form == "monarch" and p.get("project"):
        g = torch.Generator().manual_seed(seed)
        for kind in KINDS:
            err = projection_error(dense_matrix(kind, PROJ_N, g), PROJ_NB)
            rows.append({"metric": "proj_rel_err", "unit": "1", "direction": "lower", "value": err,
                         "case": f"proj_{kind}_n{PROJ_N}_nb{PROJ_NB}",
                         "params": {"matrix": kind, "proj_n": PROJ_N, "proj_nb": PROJ_NB},
                         "stats": {"seed": seed, "method": "per-slice rank-1 SVD (Monarch projection)"}})
    return rows
