"""Launch plans of the one-launch decode steps (persistent, dataflow), built once per shape and options."""
from __future__ import annotations

import json


def cached_plan(cache: dict, cls, emb, wqkv, wo, wgu, k_cache, **opts):
    """cls(L, H, Hq, Hkv, S, D, inter, V, device, **opts) for these weights' shapes, kept in cache."""
    L, H = wqkv.shape[0], emb.shape[1]
    hkv, S, D = k_cache.shape[1:]
    key = json.dumps([L, H, wo.shape[-1] // D, hkv, S, D, wgu.shape[1] // 2, emb.shape[0], str(emb.device), opts],
                     sort_keys=True)
    if key not in cache:
        cache[key] = cls(L, H, wo.shape[-1] // D, hkv, S, D, wgu.shape[1] // 2, emb.shape[0], emb.device, **opts)
    return cache[key]


def plan_and_run(cls):
    """(plan, run) for a one-launch step class: plan(emb, wqkv, wo, wgu, k_cache, **opts) builds or reuses
    its plan; run(out, emb, wqkv, wo, wgu, wd, ln1, ln2, lnf, k_cache, v_cache, token, pos, **opts) writes
    the logits (V,) fp32 and the K/V at slot pos, as triton_step.run."""
    cache: dict = {}

    def plan(emb, wqkv, wo, wgu, k_cache, **opts):
        return cached_plan(cache, cls, emb, wqkv, wo, wgu, k_cache, **opts)

    def run(out, emb, wqkv, wo, wgu, wd, ln1, ln2, lnf, k_cache, v_cache, token, pos, **opts) -> None:
        plan(emb, wqkv, wo, wgu, k_cache, **opts)(out, emb, wqkv, wo, wgu, wd, ln1, ln2, lnf, k_cache, v_cache,
                                                  token, pos)

    return plan, run
