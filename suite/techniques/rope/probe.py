"""RoPE probe: error against fp64 as the position grows (64 consecutive tokens from each start
position, tables of 131,072 rows, the page's 128k).

The runner probes only implementations that passed their check, so the two expected failures are
swept from the baseline's probe on the same points: rel_err_angles_bf16 (angles m * theta in bf16)
and rel_err_wrong_layout (the other pairing convention)."""
from __future__ import annotations

import torch

from suite.techniques.rope import reference as R
from suite.techniques.rope.torch_rope import run as torch_run

STARTS = (0, 1_000, 10_000, 100_000, 131_008)
TABLE_ROWS = 131_072
SPAN = 64


def _rel(out: torch.Tensor, ref: torch.Tensor) -> float:
    d = torch.linalg.vector_norm(out.double() - ref).item()
    return d / torch.linalg.vector_norm(ref).item()


def _is_baseline(fn) -> bool:
    return getattr(fn, "keywords", {}).get("source") == "table_fp32" and getattr(fn, "func", None) is torch_run


def _position_rows(fn, case, device: str, seed: int) -> list[dict]:
    tabs = R.tables(TABLE_ROWS, case.params["rot"], device)
    variants = [("rel_err", fn)]
    if _is_baseline(fn):
        variants += [("rel_err_angles_bf16", lambda out, **i: torch_run(out, **i, source="angles_bf16")),
                     ("rel_err_wrong_layout", lambda out, **i: torch_run(out, **i, swap=True))]
    rows = []
    for start in STARTS:
        inputs = R.inputs_at(case.params, seed, device, torch.arange(start, start + SPAN), tabs)
        ref = R.reference(**inputs)
        lowp = _rel(R.lowp(**inputs), ref)
        for metric, f in variants:
            out = torch.full(ref.shape, float("nan"), dtype=torch.bfloat16, device=device)
            f(out, **inputs)
            err = _rel(out, ref)
            stats = {"lowp_rel_err": lowp, "over_lowp": err / lowp, "positions": f"{start}..{start + SPAN - 1}",
                     "table_rows": TABLE_ROWS}
            rows.append({"metric": metric, "unit": "1", "direction": "lower", "value": err,
                         "params": {"position": start}, "case": f"{case.id}/pos{start}", "stats": stats})
    return rows


def probe(fn, case, device: str, seed: int) -> list[dict]:
    """Position rows for cases with params["accuracy"]; nothing for the others."""
    return _position_rows(fn, case, device, seed) if case.params.get("accuracy") else []
