"""Share of the copy bandwidth: the implementation and a device copy of the same bytes, timed together."""
from __future__ import annotations

from suite.lib.bandwidth import copy_share_rows
from suite.techniques.fused_norms import TECHNIQUE
from suite.techniques.fused_norms.reference import empty_output, make_inputs


def probe(fn, case, device: str, seed: int) -> list[dict]:
    inputs, out = make_inputs(case.params, seed, device), empty_output(case.params, device)
    return copy_share_rows(lambda: fn(out, **inputs), TECHNIQUE.bytes(case.params), device)
