"""Greedy agreement with the oracle over consecutive steps: the oracle (eager fp32, its own fp32
caches) decodes greedily from the case's token; the implementation, on its own caches, is fed the
oracle's tokens, and each of its argmax tokens is compared with the oracle's (64 steps on a GPU, 3
under the CPU interpreter). The plain bf16 eager model is fed the same tokens, for comparison."""
from __future__ import annotations

import torch

from suite.techniques.decode_step.reference import empty_output, forward, make_inputs


def greedy(fn, params: dict, seed: int, device: str, steps: int) -> dict:
    """Counts of steps where fn's (and bf16 eager's) argmax equals the fp32 oracle's."""
    mine = make_inputs(params, seed, device)
    ref = make_inputs(params, seed, device)
    ref.update(k_cache=ref["k_cache"].float(), v_cache=ref["v_cache"].float())
    low = make_inputs(params, seed, device)
    start = params["kv"] - steps
    out = empty_output(params, device)
    matches = low_matches = 0
    first = None
    for i in range(steps):
        for inp in (mine, ref, low):
            inp["pos"].fill_(start + i)
        fn(out, **mine)
        want = forward(torch.float32, **ref)[0].argmax()
        got = bool(out.argmax() == want)
        matches += got
        low_matches += bool(forward(torch.bfloat16, **low)[0].argmax() == want)
        first = i if first is None and not got else first
        for inp in (mine, ref, low):
            inp["token"].copy_(want.view(1))
    return {"steps": steps, "matches": matches, "lowp_matches": low_matches, "first_mismatch": first}


def probe(fn, case, device: str, seed: int) -> list[dict]:
    """greedy_match_frac: share of steps whose argmax token is the oracle's (1: identical), k of n."""
    steps = min(64 if device == "cuda" else 3, case.params["kv"] - 1)
    g = greedy(fn, case.params, seed + 20_000, device, steps)
    return [{"metric": "greedy_match_frac", "unit": "1", "direction": "higher",
             "value": g["matches"] / steps, "stats": {**g, "k": g["matches"], "n": steps}}]
