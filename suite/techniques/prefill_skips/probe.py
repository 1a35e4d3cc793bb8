"""Exactness and the FLOP prediction of each prefill mode: its last-position logits against the full
prefill's on the same inputs, bit for bit, and the share of the full prefill's FLOPs it skips."""
from __future__ import annotations

import torch

from suite.techniques.prefill_skips import model
from suite.techniques.prefill_skips.reference import empty_output, flops, make_inputs


def probe(fn, case, device: str, seed: int) -> list[dict]:
    mode = getattr(fn, "keywords", {}).get("mode", "full")
    if mode == "full":
        return []
    inputs = make_inputs(case.params, seed, device)
    full, out = empty_output(case.params, device), empty_output(case.params, device)
    model.run(full, **inputs)
    fn(out, **inputs)
    diff = (out - full).abs().max().item()
    saved = 1 - flops(case.params, mode) / flops(case.params)
    return [{"metric": "bitwise_equal", "unit": "1", "direction": "higher", "value": float(torch.equal(out, full)),
             "stats": {"max_abs_diff": diff, "note": "last-position logits vs the full prefill, same inputs"}},
            {"metric": "max_abs_diff", "unit": "1", "direction": "lower", "value": diff, "stats": {}},
            {"metric": "predicted_saving", "unit": "1", "direction": "higher", "value": saved,
             "stats": {"flops_full": flops(case.params), "flops_mode": flops(case.params, mode)}}]
