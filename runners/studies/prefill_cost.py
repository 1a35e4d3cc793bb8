"""Measured check of attn_cost on a GPU: dense vs 10%-sparse prefill attention, plus decode, per
workload; writes a result file (technique "prefill_cost_model").

    python -m runners.studies.prefill_cost --out cost.json [--max-prompt N]
"""
from __future__ import annotations

import argparse
import functools
import math

import torch

from runners.code_hash import module_hash
from runners.env import fingerprint, git_state
from runners.pool import ROOT
from runners.resultfile import ResultFile, new_run, result_row
from runners.timing import Protocol, measure
from suite.lib.block_sparse import random_blocks
from suite.lib.block_sparse_kernel import block_sparse_attention
from suite.lib.selectors import select
from suite.techniques.attention_dense.common import sdpa
from suite.techniques.prefill_cost_model.common import SHAPES, measured_saving, predicted

HQ, HKV, D, BLOCK, DENSITY = 32, 8, 128, 128, 0.10
DEVICE = {"name": "cuda", "dense_backend": "CUDNN_ATTENTION"}
SELECTORS = ("mean_pool", "msa_index")


def _time(fn, slow: bool) -> tuple[float, list[float], dict]:
    proto = Protocol(max_time_s=0.5 if slow else 1.0, min_reps=3 if slow else 10,
                     max_reps=5 if slow else 2000, warmup_reps=1 if slow else 3)
    samples, stats = measure(fn, DEVICE["name"], proto)
    return stats["median"], samples, stats


def workload(name: str, p: int, g: int) -> list[tuple[str, str, str, float, list, dict]]:
    """(metric, unit, direction, value, samples, stats) rows for one workload."""
    s = math.ceil(p / BLOCK) * BLOCK  # prompt padded to whole blocks
    cache = math.ceil((p + g) / BLOCK) * BLOCK
    dev = DEVICE["name"]
    gen = torch.Generator(device=dev).manual_seed(0)
    mk = lambda h, n: torch.randn(1, h, n, D, generator=gen, device=dev).to(torch.bfloat16)
    q, k, v = mk(HQ, s), mk(HKV, cache), mk(HKV, cache)
    kp, vp = k[:, :, :s], v[:, :, :s]
    slow = s > 200_000
    rows = []
    dense_ms, ds, dst = _time(lambda: sdpa(q, kp, vp, DEVICE["dense_backend"]), slow)
    rows.append(("dense_prefill_ms", "ms", "lower", dense_ms, ds, dst))
    num, idx = random_blocks(1, HKV, s // BLOCK, s // BLOCK, DENSITY, gen, dev)
    out = torch.empty_like(q)
    sparse_ms, ss, sst = _time(lambda: block_sparse_attention(q, kp, vp, num, idx, BLOCK, out), slow)
    rows.append(("sparse_prefill_ms", "ms", "lower", sparse_ms, ss, sst))
    sel_ms = {}
    for sel in SELECTORS:
        sel_ms[sel], sm, sst2 = _time(lambda: select(sel, q, kp, BLOCK, DENSITY), slow)
        rows.append((f"selector_{sel}_ms", "ms", "lower", sel_ms[sel], sm, sst2))
    # Decode: one query per step against the cache; the step at the mean cache length, times g.
    mid = p + g // 2
    q1 = mk(HQ, 1)
    step_ms, dms, dmst = _time(lambda: torch.nn.functional.scaled_dot_product_attention(
        q1, k[:, :, :mid], v[:, :, :mid], enable_gqa=True), False)
    decode_ms = step_ms * g
    rows.append(("decode_ms", "ms", "lower", decode_ms, [x * g for x in dms], dmst))
    pred = predicted(p, g, DENSITY)
    rows += [("predicted_saving", "x", "higher", pred["saving"], [], {}),
             ("predicted_prefill_share", "1", "higher", pred["prefill_share"], [], {}),
             ("measured_prefill_share", "1", "higher", dense_ms / (dense_ms + decode_ms), [], {}),
             ("measured_saving_kernel", "x", "higher", measured_saving(dense_ms, sparse_ms, decode_ms), [], {})]
    for sel in SELECTORS:
        rows.append((f"measured_saving_with_{sel}", "x", "higher",
                     measured_saving(dense_ms, sparse_ms + sel_ms[sel], decode_ms), [], {}))
    del q, k, v, num, idx, out
    if dev == "cuda":
        torch.cuda.empty_cache()
    return rows


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--out", required=True)
    ap.add_argument("--max-prompt", type=int, default=500_000)
    ap.add_argument("--device", default="cuda", help="cpu: a dry run (SDPA math backend)")
    ap.add_argument("--scale", type=int, default=1, help="divide every workload by this (dry runs)")
    args = ap.parse_args(argv)
    if args.device == "cpu":
        DEVICE.update(name="cpu", dense_backend="MATH")
    ihash = module_hash(__name__)
    rf = ResultFile(args.out, new_run("nightly", "manual", git_state(str(ROOT)), fingerprint(args.device),
                                      {"density": DENSITY, "block": BLOCK, "hq": HQ, "hkv": HKV, "d": D}))
    for name, p, g in SHAPES:
        p, g = p // args.scale, g // args.scale
        case = f"{name.split()[0]}_p{p}_g{g}"
        params = {"prompt": p, "generated": g, "density": DENSITY, "hq": HQ, "hkv": HKV, "d": D,
                  "block": BLOCK, "prompt_padded": math.ceil(p / BLOCK) * BLOCK}
        row = functools.partial(result_row, "prefill_cost_model", "h200_measured", case, params=params,
                                impl_version=1, impl_hash=ihash)
        if p > args.max_prompt:
            rf.add([row("measured_saving_kernel", "x", "higher", status="skipped",
                        error=f"prompt {p} > --max-prompt {args.max_prompt}")])
            continue
        try:
            rows = workload(name, p, g)
        except torch.OutOfMemoryError as exc:
            rf.add([row("measured_saving_kernel", "x", "higher", status="error", error=str(exc)[:500])])
            torch.cuda.empty_cache()
            continue
        rf.add([row(m, u, dr, value=v, samples=smp, stats=st) for m, u, dr, v, smp, st in rows])
        print(case, {m: round(v, 4) for m, _, _, v, _, _ in rows}, flush=True)
    rf.finish()


if __name__ == "__main__":
    main()
