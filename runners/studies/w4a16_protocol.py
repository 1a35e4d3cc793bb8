"""The W4A16 decode GEMM under the runner's own timing path (CUDA-graph replay, CUDA events, the L2
flushed by zeroing 2 x L2 bytes before each call): the floors (an empty launch; a kernel that only
reads the packed weights, with and without the L2 evict_first policy), how much of a call's time the
flush's dirty lines cost (the same calls after a flush that reads instead of writing), cuBLAS bf16,
and decode-kernel variants (config, L2 prefetch distance, TMA), each checked against the fp64
oracle on fresh inputs before it is timed.

python3 -m runners.studies.w4a16_protocol --out DIR [--budget-s 100] [--jobs 12] [--tiny]
Imports only torch, triton and torch-only project modules (runs on the GPU host)."""
from __future__ import annotations

import argparse
import importlib
import json
import os
import statistics
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context

import torch
import triton
import triton.language as tl

from runners.correctness import rel_err
from runners.timing import Protocol, measure
from runners.studies import w4a16_decode_tune as tune_decode
from suite.techniques.w4a16_gemm import _LLAMA, TECHNIQUE
from suite.techniques.w4a16_gemm import gluon_w4a16_decode as G
from suite.techniques.w4a16_gemm import packing
from suite.techniques.w4a16_gemm import reference as R
from suite.techniques.w4a16_gemm import triton_w4a16_decode as D
from suite.techniques.w4a16_gemm import triton_w4a16_streamk as S
from suite.techniques.w4a16_gemm import triton_w4a16_tma as T

_LD_EVICT_FIRST = tl.constexpr("{ .reg .b64 pol; .reg .pred p; createpolicy.fractional.L2::evict_first.b64 pol, 1.0; "
                               "setp.ne.b32 p, $2, 0; mov.b32 $0, 0; @p ld.global.L2::cache_hint.b32 $0, [$1], pol; }")


@triton.jit
def read_kernel(src, out, rows, N, BN: tl.constexpr, SPLIT: tl.constexpr, MODE: tl.constexpr,
                DIST: tl.constexpr, STAGES: tl.constexpr = 4):
    """xor of every (16 x BN) int32 tile of src (rows, N), per column and K split, into out (SPLIT, N).
    MODE 0: tl.load (asynchronous copies, pipelined); 1: ld.global with L2 evict_first, one tile
    ahead in registers; 2: as 0 plus an evict_first L2 prefetch DIST tiles ahead."""
    pid_n = tl.program_id(0)
    pid_k = tl.program_id(1)
    cols = pid_n * BN + tl.arange(0, BN)
    ri = tl.arange(0, 16)
    per = tl.cdiv(rows // 16, SPLIT)
    first, last = pid_k * per, tl.minimum((pid_k + 1) * per, rows // 16)
    acc = tl.zeros((16, BN), dtype=tl.int32)
    ptrs = src + ri[:, None] * N + cols[None, :]
    if MODE == 1:
        nxt = tl.inline_asm_elementwise(_LD_EVICT_FIRST, "=r,l,r", [ptrs + first * 16 * N, tl.full((16, BN), 1, tl.int32) * (first < last).to(tl.int32)],
                                        dtype=tl.int32, is_pure=True, pack=1)
    if MODE == 2:
        for d in tl.static_range(DIST):
            D._prefetch(src, first + d, pid_n, N, N, first + d < last, BN)
    for b in tl.range(first, last, num_stages=1 if MODE == 1 else STAGES):
        if MODE == 1:
            w = nxt
            nxt = tl.inline_asm_elementwise(_LD_EVICT_FIRST, "=r,l,r",
                                            [ptrs + (b + 1) * 16 * N, tl.full((16, BN), 1, tl.int32) * (b + 1 < last).to(tl.int32)],
                                            dtype=tl.int32, is_pure=True, pack=1)
        else:
            if MODE == 2:
                D._prefetch(src, b + DIST, pid_n, N, N, b + DIST < last, BN)
            w = tl.load(ptrs + b * 16 * N)
        acc ^= w
    tl.store(out + pid_k * N + cols, tl.xor_sum(acc, 0))


def _read(mode: int, dist: int = 4, bn: int = 128, warps: int = 4, stages: int = 4):
    def call(src, out, split):
        rows, n = src.shape
        read_kernel[(n // bn, split)](src, out, rows, n, BN=bn, SPLIT=split, MODE=mode, DIST=dist, STAGES=stages,
                                      num_warps=warps, num_stages=3)
    return call


# Read-only kernel configs (BN, split, stages, warps): how fast can the packed weights be read at all.
READ_SWEEP = [(128, 4, 4, 4), (128, 2, 4, 4), (128, 8, 4, 4), (128, 1, 6, 4), (128, 4, 6, 4), (128, 4, 8, 4),
              (64, 8, 6, 4), (256, 4, 4, 4), (256, 2, 4, 8), (256, 4, 6, 8), (512, 2, 4, 8), (512, 4, 4, 8)]


def _read_sweep(_=None, device: str = "cuda") -> list[str]:
    """Compiles the read-only configs; returns the failures."""
    src, bad = R.make_inputs({"m": 1, "n": 4096, "k": 4096}, 0, device)["qweight_k16"], []
    for bn, sp, st, w in READ_SWEEP:
        try:
            _read(0, bn=bn, warps=w, stages=st)(src, torch.empty(sp, 4096, device=device, dtype=torch.int32), sp)
            torch.cuda.synchronize()
        except Exception as e:  # noqa: BLE001
            bad.append(f"read {(bn, sp, st, w)}: {type(e).__name__}: {str(e)[:300]}")
    return bad


# Decode variants: (kind, BN, SPLIT_K, stages or depth, PF_DIST or EVICT); kind "d" the decode kernel
# (centred inline PTX, scales one block ahead; L2 prefetch PF_DIST blocks ahead), "t" the TMA kernel,
# "g" the Gluon kernel (words straight into MMA registers, depth blocks ahead, EVICT: evict_first).
VARIANTS = [("d", 128, sp, st, 0) for sp, st in ((4, 3), (4, 4), (4, 5), (2, 3), (2, 4), (2, 5), (1, 4), (1, 5),
                                               (8, 3), (16, 3))]
# Round 1 (at 4e0930f, docs/data/h200_w4a16_protocol_4e0930f.json): the decode kernel with BN 128 and
# 256, split-K 4-16, L2 prefetch distance 0-4, 3-4 stages; the TMA kernel; the Gluon kernel ("g",
# words in registers, depth 2-3, evict_first or not; "gv" 16-byte loads). "s": the stream-K kernel
# (programs, stages, maxnreg or 0). Round 2 (at 4bb8918): the decode kernel's split-K 4-16 beside
# the stream-K kernel (264-528 programs, 3-4 stages, maxnreg 128) and the TMA kernel. Round 3 (at
# c734cf0): the read sweep (then a crash before the variants). Round 4: split-K 1-16 x 3-5 stages.
SPLIT_OF = {"8b_qkvo": 8, "8b_up": 4, "8b_down": 16, "70b_up": 4}  # the tuner's choice at 3d21581


def _call(v, out, inp):
    kind, bn, sp, st, pf = v
    if kind == "s":
        S.launch(out, inp["a"], inp["qweight_k16"], inp["scales"], kernel=S.streamk_kernel, BN=128, PROGRAMS=bn,
                 num_warps=4, num_stages=sp, **({"maxnreg": st} if st else {}))
    elif kind == "g":
        G.launch(out, inp["a"], inp["qweight_k16"], inp["scales"], BN=bn, SPLIT_K=sp, DEPTH=st, EVICT=bool(pf))
    elif kind == "gv":
        if "qweight_k16t" not in inp:
            inp["qweight_k16t"] = packing.k16_to_k16t(inp["qweight_k16"])
        G.launch(out, inp["a"], inp["qweight_k16t"], inp["scales"], BN=bn, SPLIT_K=sp, DEPTH=st, EVICT=bool(pf),
                 VEC=True)
    elif kind == "t":
        T.launch(out, inp["a"], inp["qweight_k16"], inp["scales"], BN=bn, SPLIT_K=sp, STAGES=st)
    else:
        D.launch(out, inp["a"], inp["qweight_k16"], inp["scales"], kernel=D.decode_kernel, BM=16, BN=bn,
                 SPLIT_K=sp, ASM=True, CENTRED=True, PREFETCH=True, PF_DIST=pf, num_warps=4, num_stages=st)


def _compile(variants, device: str = "cuda", n: int = 4096, k: int = 4096) -> list[str]:
    """Runs each variant and each read mode once (filling Triton's disk cache); returns the failures."""
    bad = tune_decode._compile(variants, device, n, k, call=_call)
    if variants:
        src = R.make_inputs({"m": 1, "n": n, "k": k}, 0, device)["qweight_k16"]
        for mode in (0, 1, 2):
            try:
                _read(mode)(src, torch.empty(8, n, device=device, dtype=torch.int32), 8)
                torch.cuda.synchronize()
            except Exception as e:  # noqa: BLE001
                bad.append(f"read{mode}: {type(e).__name__}: {str(e)[:300]}")
    return bad


def _median_us(fn, flush: str) -> float:
    """Median of fn per call, in us: flush "zero" is the runner's protocol (measure, graph replay);
    "read" reads 2 x L2 bytes before each call instead (the L2 then holds clean lines); "none" no flush."""
    if flush == "zero":
        return measure(fn, "cuda", Protocol(), graph=True)[1]["median"] * 1e3
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    buf = torch.ones(2 * l2 // 4, device="cuda")
    fn()
    g = torch.cuda.CUDAGraph()
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        fn()
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    with torch.cuda.graph(g):
        fn()
    times = []
    for rep in range(400):
        if flush == "read":
            buf.sum()
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        g.replay()
        b.record()
        times.append((a, b))
        if rep % 50 == 49:
            torch.cuda.synchronize()
    torch.cuda.synchronize()
    return statistics.median(x.elapsed_time(y) for x, y in times[100:]) * 1e3


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--budget-s", type=float, default=100.0)
    ap.add_argument("--jobs", type=int, default=12)
    ap.add_argument("--tiny", action="store_true", help="argument parsing and imports only (no GPU)")
    ap.add_argument("--no-floors", action="store_true", help="the variants only")
    ap.add_argument("--read-sweep", action="store_true", help="first, read-only kernel configs (READ_SWEEP) and "
                    "a torch reduction on the packed weights of 70B up, 8B up and 8B qkvo")
    args = ap.parse_args()
    if args.tiny:
        print(f"{len(VARIANTS)} variants; layers {list(_LLAMA)}")
        return
    t0 = time.time()
    os.makedirs(args.out, exist_ok=True)
    chunks = [VARIANTS[i::args.jobs] for i in range(args.jobs)]
    compile_fn = importlib.import_module(__spec__.name if __spec__ else __name__)._compile
    with ProcessPoolExecutor(args.jobs, mp_context=get_context("spawn")) as pool:
        done = [pool.map(compile_fn, chunks)]
        if args.read_sweep:
            done.append(pool.map(importlib.import_module(__spec__.name if __spec__ else __name__)._read_sweep, [0]))
        failed = [f for results in done for bad in results for f in bad]
    print(f"compiled {len(VARIANTS)} variants in {time.time() - t0:.0f} s; failed: {failed}", flush=True)
    bad_v = {f.split(":")[0] for f in failed}
    variants = [v for v in VARIANTS if str(v) not in bad_v]
    res = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "triton": triton.__version__,
           "commit": os.environ.get("KWATCH_GIT_COMMIT"), "compile_failures": failed, "floors": {}, "rows": []}

    def save():
        res["seconds"] = time.time() - t0
        with open(os.path.join(args.out, "w4a16_protocol.json"), "w") as f:
            json.dump(res, f, indent=1)

    if args.read_sweep:
        for layer in ("70b_up", "8b_up", "8b_qkvo"):
            n, k = _LLAMA[layer]
            src = R.make_inputs({"m": 1, "n": n, "k": k}, 0, "cuda")["qweight_k16"]
            rows = []
            for bn, sp, st, w in READ_SWEEP:
                if f"read {(bn, sp, st, w)}" in bad_v:
                    continue
                dst = torch.empty(sp, n, device="cuda", dtype=torch.int32)
                us = _median_us(lambda: _read(0, bn=bn, warps=w, stages=st)(src, dst, sp), "zero")  # noqa: B023
                rows.append({"layer": layer, "config": [bn, sp, st, w], "zero_us": us, "bytes": src.numel() * 4})
            rows.append({"layer": layer, "config": "torch max", "zero_us": _median_us(src.max, "zero"),
                         "bytes": src.numel() * 4})
            res["floors"][f"{layer}_read_sweep"] = rows
            for r in sorted(rows, key=lambda r: r["zero_us"])[:5]:
                print(f"{layer} read {r['config']}: {r['zero_us']:.1f} us {r['bytes'] / r['zero_us'] / 1e6:.2f} TB/s",
                      flush=True)
            del src
        save()
    tiny = torch.empty(16, device="cuda")
    for flush in () if args.no_floors else ("zero", "read", "none"):
        res["floors"][f"empty_{flush}_us"] = _median_us(tiny.zero_, flush)
    print("empty launch (us):", {k: round(v, 2) for k, v in res["floors"].items() if k.startswith("empty")},
          flush=True)
    for layer, (n, k) in () if args.no_floors else _LLAMA.items():  # the packed weights read, nothing else
        src = R.make_inputs({"m": 1, "n": n, "k": k}, 0, "cuda")["qweight_k16"]
        dst = torch.empty(SPLIT_OF[layer], n, device="cuda", dtype=torch.int32)
        want = None
        for mode in (0, 1, 2):
            if f"read{mode}" in bad_v:
                continue
            fn = lambda mode=mode: _read(mode)(src, dst, SPLIT_OF[layer])  # noqa: E731
            fn()
            got = dst.clone()
            want = got if want is None else want
            row = {"layer": layer, "what": f"read{mode}", "same_as_read0": bool(torch.equal(got, want)),
                   "bytes": src.numel() * 4}
            for flush in ("zero", "read"):
                row[f"{flush}_us"] = _median_us(fn, flush)
                row[f"{flush}_tbps"] = row["bytes"] / row[f"{flush}_us"] / 1e6
            res["floors"][f"{layer}_read{mode}"] = row
            print(f"{layer} read{mode}: " + ", ".join(f"{key} {val:.3g}" for key, val in row.items()
                                                      if key.endswith(("us", "tbps"))), flush=True)
        del src
    save()

    tol = TECHNIQUE.tolerances["default"].k
    for m in (1, 16):  # the largest layers first: the budget may end the run
        for layer in ("70b_up", "8b_up", "8b_down", "8b_qkvo"):
            n, k = _LLAMA[layer]
            p = {"m": m, "n": n, "k": k}
            fresh = R.make_inputs(p, 1000 + m, "cuda")
            oracle_f, lo_f = R.reference(**fresh), None
            lo_f = rel_err(R.lowp_unfused(**fresh), oracle_f)
            inp = R.make_inputs(p, 7, "cuda")
            out = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
            oracle = R.reference(**inp)
            lo = rel_err(R.lowp_unfused(**inp), oracle)
            base = {"layer": layer, "m": m, "n": n, "k": k, "bytes": TECHNIQUE.bytes(p)}
            cub = lambda: torch.mm(inp["a"], inp["w_bf16"].t(), out=out)  # noqa: E731
            cub_us = {f: _median_us(cub, f) for f in ("zero", "read")}
            res["rows"].append({**base, "variant": "cublas_bf16", "zero_us": cub_us["zero"], "read_us": cub_us["read"]})
            print(f"{layer} m{m} cublas: {cub_us['zero']:.1f} us (read flush {cub_us['read']:.1f})", flush=True)
            for v in variants:
                if time.time() - t0 > args.budget_s:
                    break
                o_f = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
                _call(v, o_f, fresh)
                e_f = rel_err(o_f, oracle_f) if torch.isfinite(o_f).all() else float("inf")
                out.fill_(float("nan"))
                _call(v, out, inp)
                e = rel_err(out, oracle) if torch.isfinite(out).all() else float("inf")
                row = {**base, "variant": list(v), "err": e, "err_fresh": e_f, "unfused_err": lo,
                       "ok": e <= tol * lo and e_f <= tol * lo_f}
                if row["ok"]:
                    fn = lambda v=v: _call(v, out, inp)  # noqa: E731
                    row["zero_us"] = _median_us(fn, "zero")
                    row["x_cublas"] = cub_us["zero"] / row["zero_us"]
                    if not args.no_floors and v[2] == SPLIT_OF[layer] and (v[0] != "d" or v[4] in (0, 4)):
                        row["read_us"] = _median_us(fn, "read")
                res["rows"].append(row)
            done = [r for r in res["rows"] if r["layer"] == layer and r["m"] == m and "x_cublas" in r]
            for r in sorted(done, key=lambda r: r["zero_us"])[:4]:
                print(f"  {r['variant']} {r['zero_us']:.1f} us {r['x_cublas']:.2f}x read-flush {r.get('read_us', 0):.1f}",
                      flush=True)
            bad = [r["variant"] for r in res["rows"] if r["layer"] == layer and r["m"] == m and r.get("ok") is False]
            if bad:
                print("  WRONG:", bad, flush=True)
            save()
    save()
    print(f"done in {time.time() - t0:.0f} s", flush=True)


if __name__ == "__main__":
    main()
