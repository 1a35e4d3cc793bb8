"""Plain timing noise: a few kernels timed the ordinary way, one result file per "night".

Each night is a new Python process that times every series once with `triton.testing.do_bench`
(its L2 flush, its 25 ms warm-up and 100 ms of calls, the median of the per-call times): no CUDA
graphs, no operand placements, no adaptive stop. The two `_x` series time a loop of tiny launches
back to back, so their figure is the host's launch speed, not the GPU's. The files go through
`kwatch nightly --result` like any nightly run (technique `plain_noise`).

    python3 -m runners.studies.plain_noise --out DIR --seconds 360 --max-nights 80
    python3 -m runners.studies.plain_noise --set b --out DIR ...   # the second, held-out set

Set "a" is the one the detector was tuned on (half of it). Set "b" holds other kernels, timed later, that
no tuning saw: the replication of the plain class.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from runners.env import fingerprint, git_state
from runners.resultfile import ResultFile, new_run, result_row

TECHNIQUE = "plain_noise"


def _loop(f, k: int):
    """A callable that calls f k times back to back (a launch-bound series)."""
    def run():
        for _ in range(k):
            f()
    return run


def _series(torch, triton, dev: str = "cuda"):
    """(impl, case, params, fn) of each timed series on `dev`; fp32 operands random (bf16 for the
    4096^3 GEMM), made once per night."""
    import triton.language as tl

    @triton.jit
    def add_one(x_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = offs < n
        tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=m) + 1.0, mask=m)

    def triton_add(x):
        add_one[(triton.cdiv(x.numel(), 1024),)](x, x.numel(), BLOCK=1024)

    tiny = torch.randn(4096, device=dev)
    big = torch.randn(1 << 24, device=dev)
    sm = torch.randn(4096, 4096, device=dev)
    a16, b16 = (torch.randn(4096, 4096, device=dev, dtype=torch.bfloat16) for _ in range(2))
    a32, b32 = (torch.randn(256, 256, device=dev) for _ in range(2))

    return [
        ("torch_add_x50", "n4096", {"n": 4096, "launches": 50, "launch_bound": True}, _loop(lambda: tiny.add_(1.0), 50)),
        ("triton_add_x20", "n4096", {"n": 4096, "launches": 20, "launch_bound": True}, _loop(lambda: triton_add(tiny), 20)),
        ("torch_add", "n4096", {"n": 4096}, lambda: tiny.add_(1.0)),
        ("torch_exp", "n16m", {"n": 1 << 24}, lambda: torch.exp(big)),
        ("triton_add", "n16m", {"n": 1 << 24}, lambda: triton_add(big)),
        ("torch_softmax", "r4096c4096", {"rows": 4096, "cols": 4096}, lambda: torch.softmax(sm, -1)),
        ("torch_mm_bf16", "m4096n4096k4096", {"m": 4096, "n": 4096, "k": 4096}, lambda: a16 @ b16),
        ("torch_mm_fp32", "m256n256k256", {"m": 256, "n": 256, "k": 256}, lambda: a32 @ b32),
    ]


def _series_b(torch, triton, dev: str = "cuda"):
    """(impl, case, params, fn) of the second set: kernels set "a" does not hold, two of them
    launch-bound; fp32 operands random (bf16 and fp16 for the GEMMs), made once per night."""
    import triton.language as tl

    @triton.jit
    def scale(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = offs < n
        tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=m) * 0.5, mask=m)

    small = torch.randn(65536, device=dev)
    tiny = torch.randn(4096, device=dev)
    big = torch.randn(1 << 24, device=dev)
    out = torch.empty_like(big)
    huge = torch.randn(1 << 26, device=dev)
    ln_x = torch.randn(8192, 4096, device=dev)
    ln = torch.nn.LayerNorm(4096, device=dev)
    rs = torch.randn(4096, 4096, device=dev)
    h16 = [torch.randn(2048, 2048, device=dev, dtype=torch.float16) for _ in range(2)]
    b16 = [torch.randn(2048, 2048, device=dev, dtype=torch.bfloat16) for _ in range(2)]
    bm = [torch.randn(32, 256, 256, device=dev) for _ in range(2)]
    cs = torch.randn(1 << 20, device=dev)

    return [
        ("torch_relu_x20", "n4096", {"n": 4096, "launches": 20, "launch_bound": True},
         _loop(lambda: torch.relu_(tiny), 20)),
        ("torch_mul_x10", "n65536", {"n": 65536, "launches": 10, "launch_bound": True},
         _loop(lambda: small.mul_(1.0), 10)),
        ("torch_gelu", "n16m", {"n": 1 << 24}, lambda: torch.nn.functional.gelu(big)),
        ("triton_scale", "n16m", {"n": 1 << 24},
         lambda: scale[(triton.cdiv(big.numel(), 1024),)](big, out, big.numel(), BLOCK=1024)),
        ("torch_clone", "n64m", {"n": 1 << 26}, lambda: huge.clone()),
        ("torch_layernorm", "r8192c4096", {"rows": 8192, "cols": 4096}, lambda: ln(ln_x)),
        ("torch_sum_rows", "r4096c4096", {"rows": 4096, "cols": 4096}, lambda: rs.sum(-1)),
        ("torch_mm_fp16", "m2048n2048k2048", {"m": 2048, "n": 2048, "k": 2048}, lambda: h16[0] @ h16[1]),
        ("torch_mm_bf16", "m2048n2048k2048", {"m": 2048, "n": 2048, "k": 2048}, lambda: b16[0] @ b16[1]),
        ("torch_bmm_fp32", "b32m256n256k256", {"b": 32, "m": 256, "n": 256, "k": 256}, lambda: bm[0] @ bm[1]),
        ("torch_cumsum", "n1m", {"n": 1 << 20}, lambda: torch.cumsum(cs, 0)),
    ]


SETS = {"a": _series, "b": _series_b}


def one_night(path: Path, night: int, dev: str = "cuda", which: str = "a") -> None:
    """Time every series once in this process; write one result file (value = median, ms)."""
    import torch
    import triton
    from triton.testing import do_bench

    torch.manual_seed(night)
    run = new_run("nightly", "plain-noise study", git_state(), fingerprint(dev),
                  {"study": "plain_noise", "set": which, "night": night,
                   "timer": "triton.testing.do_bench(return_mode='all')"})
    rf = ResultFile(path, run)
    for impl, case, params, fn in SETS[which](torch, triton, dev):
        t0 = time.perf_counter()
        times = [float(t) for t in do_bench(fn, return_mode="all")]
        med = float(np.median(times))
        q1, q3 = (float(q) for q in np.percentile(times, [25, 75]))
        stats = {"n": len(times), "median": med, "q1": q1, "q3": q3, "min": min(times), "max": max(times),
                 "protocol": "plain-do_bench", "wall_s": round(time.perf_counter() - t0, 3)}
        rf.add([result_row(TECHNIQUE if which == "a" else f"{TECHNIQUE}_{which}", impl, case, "latency_ms", "ms", "lower", value=med, samples=times[:2000],
                           stats=stats, params=params, impl_version=1)])
    rf.finish()


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, required=True, help="folder for night_NNN.json.gz")
    ap.add_argument("--seconds", type=float, default=360.0, help="stop starting nights after this long")
    ap.add_argument("--max-nights", type=int, default=80)
    ap.add_argument("--set", dest="which", choices=sorted(SETS), default="a",
                    help="a: the tuned-on kernels; b: other kernels no tuning saw")
    ap.add_argument("--night", type=int, default=None, help=argparse.SUPPRESS)  # the child: one night
    a = ap.parse_args(argv)
    if a.night is not None:
        one_night(a.out / f"night_{a.night:03d}.json.gz", a.night, which=a.which)
        return
    a.out.mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    for n in range(a.max_nights):
        if time.time() - t0 > a.seconds:
            break
        s = time.time()
        subprocess.run([sys.executable, "-m", "runners.studies.plain_noise", "--out", str(a.out), "--night", str(n),
                        "--set", a.which],
                       check=True, env=os.environ)
        print(f"night {n}: {time.time() - s:.1f} s", flush=True)


if __name__ == "__main__":
    main()
