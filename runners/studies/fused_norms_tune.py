"""GPU sweep of the norm kernel's config (warps, rows per program; LayerNorm's one or two reductions) at
16K tokens and hidden 2048/4096/8192: each config checked against the fp64 oracle on fresh inputs first,
then timed under runners/timing.py's protocol (runners/studies/timed.py); GB/s and share of the copy
bandwidth measured in this script (a 1 GiB copy timed as the runner's ceiling, and a copy of the norm's own
bytes timed as the norm is).

python3 -m runners.studies.fused_norms_tune --out DIR [--budget-s 100] [--jobs 16] [--hidden 2048 ...]
Writes DIR/fused_norms_tune.json after each hidden size. --tiny: small shapes and a few configs on the
CPU under TRITON_INTERPRET=1 (a dry run of the script)."""
from __future__ import annotations

import argparse
import json
import os
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context

import torch
import triton

from runners.correctness import rel_err
from runners.studies.timed import timed
from suite.lib.bandwidth import copy_gbps
from suite.lib.norm_triton import config_for, norm
from suite.techniques.fused_norms import reference as R
from suite.techniques.fused_norms.tune_space import KINDS, grid


def _call(p: dict, inp: dict, out: torch.Tensor, cfg, one_reduce: bool) -> None:
    res = inp["residual"]
    norm(out[0], inp["x"], inp["weight"], inp["bias"] if p["kind"] == "layer" else None, res,
         out[1] if res is not None else None, inp["eps"], layer=p["kind"] == "layer", config=cfg,
         one_reduce=one_reduce)


def _params(kind: str, residual: bool, tokens: int, hidden: int) -> dict:
    return {"kind": kind, "residual": residual, "tokens": tokens, "hidden": hidden}


def _compile(jobs: list) -> list[str]:
    """Runs each (params, config, one_reduce) once on a few rows (fills Triton's disk cache)."""
    bad = []
    for p, cfg, one in jobs:
        try:
            q = dict(p, tokens=33)
            inp = R.make_inputs(q, 0, "cuda")
            _call(q, inp, R.empty_output(q, "cuda"), cfg, one)
            torch.cuda.synchronize()
        except Exception as e:  # noqa: BLE001 - reported per config
            bad.append(f"{p} {cfg} {one}: {type(e).__name__}: {str(e)[:200]}")
    return bad


def check(p: dict, cfg, one: bool, device: str, seeds=(11, 12)) -> tuple[bool, float, float]:
    """Worst (error, one-rounding error) vs fp64 on fresh inputs with a ragged row count; ok within 2x."""
    q = dict(p, tokens=min(p["tokens"], 67 if device == "cuda" else 5))
    worst = (0.0, 0.0)
    for s in seeds:
        inp = R.make_inputs(q, s, device)
        out = R.empty_output(q, device).fill_(float("nan"))
        _call(q, inp, out, cfg, one)
        ref = R.reference(**inp)
        worst = max(worst, (rel_err(out, ref), rel_err(R.lowp(**inp), ref)))
    return worst[0] <= 2 * worst[1] and worst[0] == worst[0], *worst


def bench(fn, device: str) -> tuple[float, str]:
    """(median ms, protocol name) of fn (runners/studies/timed.py: the runner's protocol on the GPU, two
    host-timed calls on the CPU)."""
    stats = timed(fn, device)[1]
    return stats["median"], stats["protocol"]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--budget-s", type=float, default=100.0)
    ap.add_argument("--jobs", type=int, default=16)
    ap.add_argument("--tiny", action="store_true")
    ap.add_argument("--hidden", type=int, nargs="*", help="hidden sizes (default 2048 4096 8192)")
    a = ap.parse_args()
    device = "cpu" if a.tiny else "cuda"
    tokens, hiddens = (6, (64, 128)) if a.tiny else (16384, tuple(a.hidden or (2048, 4096, 8192)))
    t0 = time.time()
    os.makedirs(a.out, exist_ok=True)
    path = os.path.join(a.out, "fused_norms_tune.json")
    cases = [(_params(k, res, tokens, hd), one) for hd in hiddens for k, res, one in KINDS]
    jobs = [(p, cfg, one) for p, one in cases
            for cfg in grid(triton.next_power_of_2(p["hidden"]))[:3 if a.tiny else None]]
    bad = []
    if device == "cuda":
        chunks = [jobs[i::a.jobs] for i in range(a.jobs)]
        with ProcessPoolExecutor(a.jobs, mp_context=get_context("spawn")) as ex:
            for b in ex.map(_compile, chunks):
                bad += b
        env = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "triton": triton.__version__}
    else:
        env = {"device": "cpu (TRITON_INTERPRET=%s)" % os.environ.get("TRITON_INTERPRET", "0")}
    copy = copy_gbps(device)
    print(f"compiled {len(jobs)} configs in {time.time() - t0:.0f} s ({len(bad)} failed); "
          f"1 GiB copy {copy:.0f} GB/s", flush=True)
    doc = {"env": env, "protocols": [], "copy_gbps_1gib": copy, "compile_failures": bad, "rows": [], "best": {}}
    for hd in hiddens:
        hd_jobs = [j for j in jobs if j[0]["hidden"] == hd]
        src = torch.randn(tokens * hd * 2, device=device).to(torch.bfloat16)  # a copy of the 4-tensor bytes
        dst = torch.empty_like(src)
        copy_ms, proto = bench(lambda: dst.copy_(src), device)
        copy_own = 2 * src.numel() * 2 / (copy_ms * 1e-3) / 1e9
        doc.setdefault("copy_gbps_same_protocol", {})[str(hd)] = copy_own
        for p, cfg, one in hd_jobs:
            if time.time() - t0 > a.budget_s:
                doc["stopped"] = f"budget {a.budget_s} s reached at hidden {hd}"
                break
            row = {**p, "warps": cfg[0], "rows": cfg[1], "one_reduce": one,
                   "heuristic": cfg == config_for(triton.next_power_of_2(hd)),
                   "previous": cfg == (min(16, max(1, triton.next_power_of_2(hd) // 256)), 1) and one is False}
            ok, err, err1 = check(p, cfg, one, device)
            row.update(ok=ok, rel_err=err, one_rounding_err=err1)
            if ok:
                inp = R.make_inputs(p, 0, device)
                out = R.empty_output(p, device)
                ms, proto = bench(lambda: _call(p, inp, out, cfg, one), device)
                doc["protocols"] += [proto] if proto not in doc["protocols"] else []
                gbps = 2.0 * p["tokens"] * hd * (4 if p["residual"] else 2) / (ms * 1e-3) / 1e9
                row.update(ms=ms, protocol=proto, gbps=gbps, share_copy_1gib=gbps / copy,
                           share_copy_same_protocol=gbps / copy_own)
            doc["rows"].append(row)
            name = f"{p['kind']}{'_res' if p['residual'] else ''}{'' if one else '_2red'} h{hd}"
            print(f"{name:18s} w{cfg[0]:<2d} r{cfg[1]:<2d} {'ok ' if ok else 'BAD'} err {err:.2e} "
                  + (f"{row['ms'] * 1e3:8.1f} us {row['gbps']:6.0f} GB/s {row['share_copy_1gib']:6.1%}"
                     f" {'*' if row['heuristic'] else ''}" if ok else ""), flush=True)
        for r in doc["rows"]:
            if r.get("ok") and r["hidden"] == hd:
                key = f"{r['kind']}{'_res' if r['residual'] else ''}{'' if r['one_reduce'] else '_2red'}_h{hd}"
                if key not in doc["best"] or r["ms"] < doc["best"][key]["ms"]:
                    doc["best"][key] = r
        with open(path, "w") as f:
            json.dump(doc, f, indent=1)
        if "stopped" in doc:
            break
    for k, r in doc["best"].items():
        print(f"best {k}: w{r['warps']} r{r['rows']} {r['gbps']:.0f} GB/s {r['share_copy_1gib']:.1%}")


if __name__ == "__main__":
    main()
