"""Exactness and the FLOP prediction of each prefill mode: its last-position logits against the full
prefill's on the same inputs, bit for bit, and the share of the full prefill's FLOPs it skips. For the
full prefill: whether position 0's causal attention output is its own value row bit for bit (the
page's first-token special case: a kernel that skips its softmax gives the same result)."""
from __future__ import annotations

import torch

from suite.techniques.prefill_skips import model
from suite.techniques.prefill_skips.reference import empty_output, flops, make_inputs


def probe(fn, case, device: str, seed: int) -> list[dict]:
    mode = getattr(fn, "keywords", {}).get("mode", "full")
    if mode == "full":
        return position0(case.params, device, seed)
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


def position0(p: dict, device: str, seed: int) -> list[dict]:
    """position0_exact: causal SDPA (the prefill's backend) on random bf16 q, k, v of the case's heads and
    length; 1 if every head's output row 0 equals its value row 0 bit for bit."""
    import torch.nn.functional as F

    g = torch.Generator(device=device).manual_seed(seed + 7)
    q, k, v = (torch.randn(1, p["heads"], p["tokens"], p["head_dim"], generator=g, device=device).to(torch.bfloat16)
               for _ in range(3))
    o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    diff = (o[:, :, 0] - v[:, :, 0]).abs().max().item()
    return [{"metric": "position0_exact", "unit": "1", "direction": "higher",
             "value": float(torch.equal(o[:, :, 0], v[:, :, 0])),
             "stats": {"max_abs_diff": diff, "note": "causal SDPA row 0 vs v row 0, every head, bf16"}}]
