"""GPU sweep of the decode kernel: correctness against the oracle on fresh inputs first, then every
config timed under runners/timing.py's protocol (runners/studies/timed.py) on the Llama shapes at M = 1
and 16, beside cuBLAS bf16: a table with TB/s and the ratio, and the best config per case as JSON.

python3 -m runners.studies.w4a16_decode_tune --out DIR [--budget-s 90] [--jobs 12] [--deep]
Configs are compiled first in parallel processes (Triton's disk cache), then timed in this one;
floors first: an empty launch and a device copy of each layer's packed weights, L2 cleared.
--compile-only: the autotuners' CONFIGS (decode and stream-K kernels) into the disk cache (before a
nightly run), nothing timed.
--tiny: a few configs on small shapes, on the CPU under TRITON_INTERPRET=1 (a dry run of the script)."""
from __future__ import annotations

import argparse
import importlib
import json
import os
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context

import torch
import triton

from runners.correctness import rel_err
from runners.studies.timed import timed
from suite.techniques.w4a16_gemm import TECHNIQUE, _LLAMA
from suite.techniques.w4a16_gemm import reference as R
from suite.techniques.w4a16_gemm import triton_w4a16_decode as D
from suite.techniques.w4a16_gemm import triton_w4a16_streamk as S
from suite.techniques.w4a16_gemm.tune_space import DEEP, NIGHTLY, SWEEP

PROTOCOLS: dict[str, None] = {}  # the protocol names the timings were taken under, in order



def _call(v, out, inp):
    layout, bm, bn, sp, w, st, asm, cen, pf = v
    D.launch(out, inp["a"], inp["qweight" if layout == "k8" else "qweight_k16"], inp["scales"], layout=layout,
             kernel=D.decode_kernel, BM=bm, BN=bn, SPLIT_K=sp, ASM=asm, CENTRED=cen, PREFETCH=pf, num_warps=w,
             num_stages=st)


def _call_streamk(c, out, inp):
    """One run of the stream-K kernel with autotuning config c."""
    S.launch(out, inp["a"], inp["qweight_k16"], inp["scales"], kernel=S.streamk_kernel, **c.all_kwargs())


def _compile_streamk(configs) -> list[str]:
    return _compile(configs, call=_call_streamk)


def _compile(variants, device: str = "cuda", n: int = 4096, k: int = 4096, call=None) -> list[str]:
    """Compiles (by running `call`, this sweep's launcher by default, once) each variant on a
    Llama-like shape at M = 16; returns the failures."""
    inp = R.make_inputs({"m": 16, "n": n, "k": k}, 0, device)
    out, bad = torch.empty(16, n, device=device, dtype=torch.bfloat16), []
    for v in variants:
        try:
            (call or _call)(v, out, inp)
            if device == "cuda":
                torch.cuda.synchronize()
        except Exception as e:  # noqa: BLE001 - reported per variant
            bad.append(f"{v}: {type(e).__name__}: {str(e)[:200]}")
    return bad


def bench(fn, device: str) -> float:
    """Median ms of fn (runners/studies/timed.py: the runner's protocol on the GPU, two calls on the CPU);
    the protocol's name is kept in PROTOCOLS for the file."""
    stats = timed(fn, device)[1]
    PROTOCOLS.setdefault(stats["protocol"], None)
    return stats["median"]


def check(v, params, seeds, device: str) -> tuple[bool, float, float]:
    """Worst (error, unfused error) over fresh seeds; ok when within the spec's 2x and finite."""
    worst = (0.0, 0.0)
    for seed in seeds:
        inp = R.make_inputs(params, seed, device)
        out = torch.full((params["m"], params["n"]), float("nan"), device=device, dtype=torch.bfloat16)
        _call(v, out, inp)
        oracle = R.reference(**inp)
        e, lo = rel_err(out, oracle), rel_err(R.lowp_unfused(**inp), oracle)
        if not torch.isfinite(out).all():
            e = float("inf")
        worst = max(worst, (e, lo))
    k = TECHNIQUE.tolerances["default"].k
    return worst[0] <= k * worst[1], worst[0], worst[1]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out")
    ap.add_argument("--budget-s", type=float, default=90.0)
    ap.add_argument("--jobs", type=int, default=12)
    ap.add_argument("--tiny", action="store_true")
    ap.add_argument("--deep", action="store_true", help="sweep DEEP (4-6 stages, split-K 1-2) instead of SWEEP")
    ap.add_argument("--compile-only", action="store_true", help="compile the autotuners' configs (the decode "
                    "and stream-K kernels' CONFIGS) in parallel into Triton's disk cache, and stop")
    args = ap.parse_args()
    if not (args.out or args.compile_only):
        ap.error("--out is required for a sweep")
    t0 = time.time()
    dev = "cpu" if args.tiny else "cuda"
    variants = list(dict.fromkeys(NIGHTLY if args.compile_only else DEEP if args.deep else SWEEP))
    if args.tiny:
        variants = [v for v in variants if v[2] in (32, 64) and v[3] in (2, 4, 8)][:3] + [SWEEP[-3], SWEEP[-1]]
        failed = _compile(variants, dev, 64, 256)
    else:
        chunks = [variants[i::args.jobs] for i in range(args.jobs)]
        mod = importlib.import_module(__spec__.name if __spec__ else __name__)  # functions picklable by name
        with ProcessPoolExecutor(args.jobs, mp_context=get_context("spawn")) as pool:
            done = [pool.map(mod._compile, chunks)]  # map submits every task at once
            if args.compile_only:  # and the stream-K kernel's autotuning configs
                done.append(pool.map(mod._compile_streamk, [[c] for c in S.CONFIGS]))
            failed = [f for results in done for bad in results for f in bad]
    print(f"compiled {len(variants)} configs in {time.time() - t0:.0f} s; failed: {failed}", flush=True)
    if args.compile_only:
        return
    bad_v = {f.split(":")[0] for f in failed}
    variants = [v for v in variants if str(v) not in bad_v]

    rows, checks = [], []
    for v in [("k16", 16, 128, 4, 4, 3, True, True, False), ("k16", 16, 64, 8, 4, 3, True, True, True),
              ("k16", 16, 32, 2, 2, 4, True, True, True), ("k16", 16, 128, 8, 4, 3, True, False, True),
              ("k8", 16, 128, 4, 4, 3, True, True, True), ("k16", 16, 128, 4, 4, 3, False, False, False)]:
        for m in (1, 16, 13):
            params = {"m": m, "n": 4096, "k": 4096} if m != 13 else {"m": 13, "n": 1536, "k": 14336}
            if args.tiny:
                params = {**params, "n": 256, "k": 512}
            ok, e, lo = check(v, params, (101, 202, 303), dev)
            checks.append({"variant": v, "params": params, "ok": ok, "err": e, "unfused_err": lo})
            print(f"check {v} {params}: {'ok' if ok else 'FAILED'} err {e:.3g} unfused {lo:.3g}", flush=True)
    wrong = {tuple(c["variant"]) for c in checks if not c["ok"]}

    shapes = {"tiny": (256, 256)} if args.tiny else _LLAMA
    tiny = torch.empty(16, device=dev)
    floors = {"empty_us": bench(tiny.zero_, dev) * 1e3}  # a launch, L2 cleared
    for layer, (n, k) in shapes.items():  # device copy of the packed weights: read + write, L2 cleared
        qw = R.make_inputs({"m": 1, "n": n, "k": k}, 0, dev)["qweight_k16"]
        dst = torch.empty_like(qw)
        floors[f"copy_{layer}_us"] = bench(lambda: dst.copy_(qw), dev) * 1e3
    print("floors (us):", {key: round(v, 2) for key, v in floors.items()}, flush=True)
    for layer, (n, k) in shapes.items():
        for m in (1, 16):
            p = {"m": m, "n": n, "k": k}
            inp = R.make_inputs(p, 7, dev)
            out = torch.empty(m, n, device=dev, dtype=torch.bfloat16)
            cublas = bench(lambda: torch.mm(inp["a"], inp["w_bf16"].t(), out=out), dev)
            oracle, lo = R.reference(**inp), None
            lo = rel_err(R.lowp_unfused(**inp), oracle)
            nbytes = TECHNIQUE.bytes(p)
            for v in variants:
                if time.time() - t0 > args.budget_s or v in wrong:
                    continue
                out.fill_(float("nan"))
                _call(v, out, inp)
                e = rel_err(out, oracle)
                ms = bench(lambda: _call(v, out, inp), dev)
                rows.append({"layer": layer, "m": m, "n": n, "k": k, "variant": list(v), "us": ms * 1e3,
                             "tbps": nbytes / ms / 1e9, "cublas_us": cublas * 1e3, "ratio": cublas / ms,
                             "err": e, "ok": e <= 2 * lo, "nightly_config": v in NIGHTLY})
    best = {}
    for r in rows:
        key = f"m{r['m']}_{r['layer']}"
        if r["ok"] and (key not in best or r["us"] < best[key]["us"]):
            best[key] = r
    print("\ncase | cuBLAS bf16 us | best us | TB/s | share of 4.25 TB/s copy | x cuBLAS | variant (layout, BM, BN, SPLIT_K, warps, stages, ASM, CENTRED, PREFETCH)")
    for key, r in best.items():
        print(f"{key} | {r['cublas_us']:.1f} | {r['us']:.1f} | {r['tbps']:.2f} | {r['tbps'] / 4.25:.0%} | {r['ratio']:.2f} | {r['variant']}")
    print("\nper case, the 5 fastest:")
    for key in best:
        rs = sorted((r for r in rows if f"m{r['m']}_{r['layer']}" == key), key=lambda r: r["us"])[:5]
        for r in rs:
            print(f"  {key} {r['variant']} {r['us']:.1f} us {r['tbps']:.2f} TB/s {r['ratio']:.2f}x ok={r['ok']}")
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "w4a16_decode_sweep.json"), "w") as f:
        json.dump({"device": torch.cuda.get_device_name() if dev == "cuda" else "cpu", "torch": torch.__version__, "triton": triton.__version__,
                   "protocols": list(PROTOCOLS), "compile_failures": failed, "checks": checks, "floors": floors, "best": best, "rows": rows,
                   "seconds": time.time() - t0}, f, indent=1)
    print(f"sweep done in {time.time() - t0:.0f} s, {len(rows)} timings", flush=True)


if __name__ == "__main__":
    main()
