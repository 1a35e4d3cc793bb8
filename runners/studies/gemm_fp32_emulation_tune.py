"""GPU sweep of the Gluon planes GEMM (tile, stages, warps, overlapped chains, programs) for BF16x9/x6/x3 at
8192^3 beside cuBLAS FP32, cuBLAS bf16 (the unit rate) and the Triton planes kernel: every config checked
against the fp64 oracle on fresh inputs (ragged 1000 x 1000 x 1024 and the timed operands) before it is
timed with triton.testing.do_bench; the split pass timed on its own.

python3 -m runners.studies.gemm_fp32_emulation_tune --out DIR [--budget-s 85] [--jobs 12] [--n 8192]
Writes DIR/gemm_fp32_emulation_tune.json as it goes."""
from __future__ import annotations

import argparse
import json
import os
import time
from concurrent.futures import ProcessPoolExecutor, wait
from multiprocessing import get_context

import torch
import triton

from runners.correctness import rel_err
from suite.lib.planes import fp32_precision
from suite.techniques.gemm_fp32_emulation import gluon_planes_kernel as G
from suite.techniques.gemm_fp32_emulation import triton_planes_kernel as T
from suite.techniques.gemm_fp32_emulation.triton_tiles import split

SCHEMES = ("bf16x9", "bf16x6", "bf16x3")
# (BM, BN, BK, stages, warps, overlap, a in registers, CTAs per SM; 0: one program per tile)
_X96 = [(128, 128, 32, 4, 8, 1, 1, 1), (128, 128, 32, 4, 8, 1, 0, 1), (128, 128, 32, 4, 8, 0, 1, 1),
        (128, 128, 32, 4, 8, 0, 0, 1), (64, 128, 32, 3, 4, 1, 1, 2), (64, 128, 32, 3, 4, 1, 0, 2),
        (64, 128, 32, 3, 4, 0, 0, 2), (128, 128, 32, 4, 8, 1, 1, 0)]
GRID = {
    "bf16x9": _X96,
    "bf16x6": _X96,
    "bf16x3": [(128, 128, 64, 3, 8, 1, 1, 1), (128, 128, 64, 3, 8, 1, 0, 1), (128, 128, 64, 3, 8, 0, 1, 1),
               (128, 128, 64, 3, 8, 0, 0, 1), (128, 128, 32, 6, 8, 1, 1, 1), (64, 128, 32, 4, 4, 1, 1, 2),
               (64, 128, 32, 4, 4, 0, 0, 2), (128, 128, 64, 3, 8, 1, 1, 0)],
}


def _inputs(m, n, k, seed):
    g = torch.Generator(device="cuda").manual_seed(seed)
    return (torch.randn(m, k, device="cuda", generator=g), torch.randn(k, n, device="cuda", generator=g))


def _compile(jobs: list) -> list[str]:
    """Runs each (scheme, config) once on 4096 x 2048 x 256 (fills Triton's disk cache); failures as text."""
    bad = []
    a, b = _inputs(4096, 2048, 256, 0)  # several tiles per program, as at 8192
    for scheme, cfg in jobs:
        try:
            out = torch.empty(4096, 2048, device="cuda")
            if cfg is None:  # the Triton planes kernel's autotune configs
                for c in T.configs_for(scheme):
                    T.compile_for(c, scheme)
                continue
            G.gemm(split(a, scheme), split(b, scheme), out, scheme, cfg)
            torch.cuda.synchronize()
        except Exception as e:  # noqa: BLE001 - reported per config
            bad.append(f"{scheme} {cfg}: {type(e).__name__}: {str(e)[:300]}")
    return bad


def _compile_all(jobs: list, workers: int, timeout: float) -> list[str]:
    """Compiles and runs every job once in worker processes; a job that has not finished within
    `timeout` s (a kernel that never completes) is reported and its worker killed."""
    ex = ProcessPoolExecutor(workers, mp_context=get_context("spawn"))
    futs = {ex.submit(_compile, [j]): j for j in jobs}
    done, hung = wait(futs, timeout=timeout)
    bad = [m for f in done for m in f.result()] + [f"{futs[f][0]} {futs[f][1]}: did not finish" for f in hung]
    if hung:
        for proc in list(ex._processes.values()):
            proc.kill()
    ex.shutdown(wait=not hung, cancel_futures=True)
    return bad


def _bench(fn) -> float:
    return triton.testing.do_bench(fn, warmup=10, rep=60)


def parse_args(budget_s: float, jobs: int, grids: tuple[str, ...] = ()) -> argparse.Namespace:
    """--out DIR, --budget-s (seconds for the whole sweep), --jobs (compile processes), --n (the square size),
    --grid (one of `grids`, the first by default, where given)."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--budget-s", type=float, default=budget_s)
    ap.add_argument("--jobs", type=int, default=jobs)
    ap.add_argument("--n", type=int, default=8192)
    if grids:
        ap.add_argument("--grid", choices=grids, default=grids[0])
    return ap.parse_args()


def main() -> None:
    args = parse_args(budget_s=85, jobs=12)
    t0 = time.time()
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, "gemm_fp32_emulation_tune.json")
    jobs = [(s, c) for s in SCHEMES for c in GRID[s]] + [(s, None) for s in SCHEMES]
    bad = _compile_all(jobs, args.jobs, timeout=45)
    print(f"compiled {len(jobs)} configs in {time.time() - t0:.1f} s; failures: {bad}", flush=True)
    n = args.n
    flops = 2.0 * n ** 3
    rec = {"device": torch.cuda.get_device_name(0), "n": n, "compile_failures": bad, "rows": [],
           "triton": triton.__version__, "torch": torch.__version__}

    def dump():
        with open(path, "w") as f:
            json.dump(rec, f, indent=1)

    # Small ragged check first (tails of M, N and K), then the timed operands against fp64.
    sa, sb = _inputs(3000, 1000, 520, 7)
    sref = sa.double() @ sb.double()
    a, b = _inputs(n, n, n, 1)
    ref = a.double() @ b.double()
    out = torch.empty(n, n, device="cuda")
    with fp32_precision("ieee"):
        ms = _bench(lambda: torch.matmul(a, b, out=out))
        rec["cublas_fp32"] = {"ms": ms, "tflops": flops / ms / 1e9, "rel_err": rel_err(out, ref)}
    ah, bh = a.bfloat16(), b.bfloat16()
    ms = _bench(lambda: torch.matmul(ah, bh))
    rec["cublas_bf16"] = {"ms": ms, "tflops": flops / ms / 1e9}
    base = rec["cublas_fp32"]["tflops"]
    print(f"cublas fp32 {base:.1f} TFLOP/s err {rec['cublas_fp32']['rel_err']:.2e}; "
          f"bf16 {rec['cublas_bf16']['tflops']:.0f}", flush=True)
    dump()
    for scheme in SCHEMES:  # baselines first: the Triton planes kernel and the split pass
        rec[f"split_{scheme}_ms"] = _bench(lambda: (split(a, scheme), split(b, scheme)))
        out.fill_(float("nan"))
        T.run(out, a, b, scheme)
        e = rel_err(out, ref)
        ms = _bench(lambda: T.run(out, a, b, scheme))
        rec["rows"].append({"scheme": scheme, "impl": "triton_planes", "ms": ms, "tflops": flops / ms / 1e9,
                            "x_fp32": flops / ms / 1e9 / base, "rel_err": e})
        print(f"{scheme} triton planes {flops / ms / 1e9:.1f} ({flops / ms / 1e9 / base:.2f}x) err {e:.2e}; split "
              f"{rec[f'split_{scheme}_ms']:.3f} ms", flush=True)
        dump()
    failed = {msg.split(":")[0] for msg in bad}
    for scheme in SCHEMES:
        pa, pb = split(a, scheme), split(b, scheme)
        for cfg in GRID[scheme]:
            if f"{scheme} {cfg}" in failed:
                continue
            if time.time() - t0 > args.budget_s - 12:  # the rest for the other shapes
                print("budget spent", flush=True)
                break
            row = {"scheme": scheme, "impl": "gluon_planes", "config": cfg}
            try:
                so = torch.full((3000, 1000), float("nan"), device="cuda")
                G.gemm(split(sa, scheme), split(sb, scheme), so, scheme, cfg)
                row["rel_err_small"] = rel_err(so, sref)
                out.fill_(float("nan"))
                G.gemm(pa, pb, out, scheme, cfg)
                row["rel_err"] = rel_err(out, ref)
                gms = _bench(lambda: G.gemm(pa, pb, out, scheme, cfg))
                fms = _bench(lambda: G.gemm(split(a, scheme), split(b, scheme), out, scheme, cfg))
                row.update(gemm_ms=gms, ms=fms, tflops=flops / fms / 1e9, x_fp32=flops / fms / 1e9 / base,
                           mma_share=flops * G._NPROD[scheme] / gms / 1e9 / rec["cublas_bf16"]["tflops"])
                print(f"{scheme} {cfg} {row['tflops']:.1f} ({row['x_fp32']:.2f}x) gemm-only {gms:.3f} ms, "
                      f"mma {row['mma_share']:.2f} of bf16; err {row['rel_err']:.2e} small {row['rel_err_small']:.2e}",
                      flush=True)
            except Exception as e:  # noqa: BLE001 - reported per config
                row["error"] = f"{type(e).__name__}: {str(e)[:300]}"
                print(scheme, cfg, row["error"], flush=True)
            rec["rows"].append(row)
            dump()
    _shapes(rec, args.budget_s - (time.time() - t0), dump)
    dump()


SHAPES = ((16384, 256, 8192), (256, 16384, 8192), (8192, 8192, 256))


def _shapes(rec: dict, budget: float, dump) -> None:
    """The two fastest correct configs of each scheme on the full tier's skinny and K-short shapes,
    with cuBLAS FP32 and the Triton planes kernel on the same operands."""
    best = {s: sorted((r for r in rec["rows"] if r["scheme"] == s and r["impl"] == "gluon_planes" and "tflops" in r
                       and r["rel_err"] <= 4 * max(rec["cublas_fp32"]["rel_err"], 2 ** -22)),
                      key=lambda r: -r["tflops"])[:2] for s in SCHEMES}

    def runs(scheme, a, b, out):
        return [("triton_planes", None, lambda: T.run(out, a, b, scheme))] + [
            ("gluon_planes", r["config"], lambda c=r["config"]: G.gemm(split(a, scheme), split(b, scheme), out,
                                                                       scheme, c)) for r in best[scheme]]

    time_shapes(rec, budget, dump, runs)


def time_shapes(rec: dict, budget: float, dump, runs, schemes=SCHEMES) -> None:
    """rec["shapes"]: cuBLAS FP32 and each scheme's runs(scheme, a, b, out) -> [(impl, config, fn)] on the
    SHAPES (fresh operands, checked against fp64, then timed), until `budget` seconds have passed."""
    t0 = time.time()
    rec["shapes"] = []
    for m, n, k in SHAPES:
        a, b = _inputs(m, n, k, 3)
        ref = a.double() @ b.double()
        out = torch.empty(m, n, device="cuda")
        flops = 2.0 * m * n * k
        with fp32_precision("ieee"):
            ms = _bench(lambda: torch.matmul(a, b, out=out))
            base = flops / ms / 1e9
            rec["shapes"].append({"shape": [m, n, k], "impl": "cublas_fp32", "ms": ms, "tflops": base,
                                  "rel_err": rel_err(out, ref)})
        for scheme in schemes:
            for impl, cfg, fn in runs(scheme, a, b, out):
                if time.time() - t0 > budget:
                    return
                out.fill_(float("nan"))
                fn()
                e = rel_err(out, ref)
                ms = _bench(fn)
                rec["shapes"].append({"shape": [m, n, k], "scheme": scheme, "impl": impl, "config": cfg, "ms": ms,
                                      "tflops": flops / ms / 1e9, "x_fp32": flops / ms / 1e9 / base, "rel_err": e})
                print(f"m{m}n{n}k{k} {scheme} {impl} {cfg} {flops / ms / 1e9:.1f} ({flops / ms / 1e9 / base:.2f}x) "
                      f"err {e:.2e}", flush=True)
            dump()


if __name__ == "__main__":
    main()
