"""Our decode step as one persistent launch walking the layers (suite/lib/decode_persistent.py):
the same fused stages as triton_step (attention on tensor cores), grid barriers instead of kernel
boundaries, each program asking the L2 for the next stage's weights before it waits. Options:
programs_per_sm, num_warps, block_k, gu_mb / wd_mb / head_mb (prefetched MB), prefetch, rows."""
from __future__ import annotations

import json

from suite.lib.decode_persistent import PersistentDecode

_PLANS: dict[str, PersistentDecode] = {}


def plan(emb, wqkv, wo, wgu, k_cache, **opts) -> PersistentDecode:
    """The launch plan and scratch for these shapes and options (built once)."""
    L, H = wqkv.shape[0], emb.shape[1]
    hkv, S, D = k_cache.shape[1:]
    key = json.dumps([L, H, wo.shape[-1] // D, hkv, S, D, wgu.shape[1] // 2, emb.shape[0], str(emb.device), opts],
                     sort_keys=True)
    if key not in _PLANS:
        _PLANS[key] = PersistentDecode(L, H, wo.shape[-1] // D, hkv, S, D, wgu.shape[1] // 2, emb.shape[0],
                                       emb.device, **opts)
    return _PLANS[key]


def run(out, emb, wqkv, wo, wgu, wd, ln1, ln2, lnf, k_cache, v_cache, token, pos, **opts) -> None:
    """out (V,) fp32 <- logits of one decode step; K/V written at slot pos (as triton_step.run)."""
    plan(emb, wqkv, wo, wgu, k_cache, **opts)(out, emb, wqkv, wo, wgu, wd, ln1, ln2, lnf, k_cache, v_cache,
                                              token, pos)
