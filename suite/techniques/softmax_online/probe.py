"""Rescale counts of a conditional-rescaling attention variant: KV blocks visited, blocks where
some running max grew, and rescales done (growths > THRESH). Always-rescale variants do one
rescale per KV block by construction, so they report nothing here."""
from __future__ import annotations

import torch

from suite.spec import resolve
from suite.techniques import softmax_online


def probe(fn, case, device: str, seed: int) -> list[dict]:
    """rescale_frac and max_grew_frac rows for variants with THRESH > 0; nothing for the others."""
    variant = getattr(fn, "keywords", {})  # exp, degree, thresh of a Triton variant
    if not variant.get("thresh", 0) > 0:
        return []
    from suite.techniques.softmax_online.common import launch  # lazily: it imports triton

    inputs = resolve(softmax_online.TECHNIQUE.make_inputs)(case.params, seed, device)
    out = resolve(softmax_online.TECHNIQUE.empty_output)(case.params, device)
    counts = torch.zeros(3, dtype=torch.int32, device=device)
    launch(out, counts=counts, **variant, **inputs)
    blocks, grew, done = (int(c) for c in counts.tolist())
    params = {"thresh_log2": variant["thresh"], "kv_blocks": blocks}
    return [
        {"metric": "rescale_frac", "unit": "1", "direction": "lower", "value": done / blocks,
         "params": params, "stats": {"rescales": done, "kv_blocks": blocks, "k": done, "n": blocks}},
        {"metric": "max_grew_frac", "unit": "1", "direction": "lower", "value": grew / blocks,
         "params": params, "stats": {"grew": grew, "kv_blocks": blocks, "k": grew, "n": blocks}},
    ]
