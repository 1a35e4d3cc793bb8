"""Share of the copy bandwidth: the implementation and a device copy of the same bytes, timed together."""
from __future__ import annotations

from suite.lib.bandwidth import copy_share_rows
from suite.techniques.fused_norms.reference import empty_output, make_inputs


def traffic(p: dict) -> float:
    """Least bytes per call: read x (and residual), write y (and the new residual), bf16; weights aside."""
    return 2.0 * p["tokens"] * p["hidden"] * (4 if p.get("residual") else 2)


def probe(fn, case, device: str, seed: int) -> list[dict]:
    inputs, out = make_inputs(case.params, seed, device), empty_output(case.params, device)
    return copy_share_rows(lambda: fn(out, **inputs), traffic(case.params), device)
