"""Compile every Triton kernel variant of this technique in parallel processes, filling Triton's
on-disk cache before a run (the autotuner would otherwise compile config after config in one
process). Usage on a GPU host: python3 -m suite.techniques.gemm_fp32_emulation.warm_cache [procs]."""
from __future__ import annotations

import sys
import time
from concurrent.futures import ProcessPoolExecutor

_PKG = "suite.techniques.gemm_fp32_emulation"


def _tasks() -> list[tuple[str, dict]]:
    from suite.techniques.gemm_fp32_emulation import triton_cat_kernel as cat
    from suite.techniques.gemm_fp32_emulation import triton_gemm_kernel as g
    from suite.techniques.gemm_fp32_emulation import triton_planes_kernel as p
    from suite.techniques.gemm_fp32_emulation import triton_regsplit_kernel as r

    tasks = []
    for nprod, tf32, promote in ((9, False, True), (6, False, True), (3, False, True), (3, True, True),
                                 (9, False, False), (3, False, False)):
        meta = {"NPROD": nprod, "TF32": tf32, "PROMOTE": promote}
        for c in p.prune_configs(p.autotune_configs(), {}, **meta):
            tasks.append(("planes", dict(meta, **c.all_kwargs())))
    for nprod in (9, 6, 3):
        for c in r.autotune_configs():
            tasks.append(("regsplit", dict(NPROD=nprod, PIECES=2 if nprod == 3 else 3, **c.all_kwargs())))
    for scheme, (g1, g2) in cat.GROUPS.items():
        meta = dict(NB1=len(g1), PA1=cat.pack([i for i, _ in g1]), PB1=cat.pack([j for _, j in g1]),
                    NB2=len(g2), PA2=cat.pack([i for i, _ in g2]), PB2=cat.pack([j for _, j in g2]))
        for c in cat.prune_configs(cat.autotune_configs(), {}, **meta):
            tasks.append(("cat", dict(meta, **c.all_kwargs())))
    for prec in ("ieee", "tf32", "tf32x3", "bf16x3", "bf16x6"):
        for c in g.autotune_configs():
            tasks.append(("builtin", dict(PRECISION=prec, **c.all_kwargs())))
    return tasks


def _compile(task: tuple[str, dict]) -> str:
    import torch

    kind, kw = task
    n = 256  # sizes and strides divisible by 16, like every GPU case: same specialisation
    t0 = time.perf_counter()
    out = torch.empty(n, n, device="cuda")
    try:
        if kind == "planes":
            from suite.techniques.gemm_fp32_emulation.triton_planes_kernel import plane_gemm_kernel

            dt = torch.float32 if kw["TF32"] else torch.bfloat16
            pieces = 2 if kw["NPROD"] == 3 else 3
            pa = torch.empty(pieces, n, n, device="cuda", dtype=dt)
            plane_gemm_kernel.fn.warmup(pa, pa, out, n, n, n, n * n, n * n, n, 1, n, 1, n, 1,
                                        UPCAST=False, grid=(1,), **kw)
        elif kind == "cat":
            from suite.techniques.gemm_fp32_emulation.triton_cat_kernel import cat_gemm_kernel

            pa = torch.empty(3, n, n, device="cuda", dtype=torch.bfloat16)
            cat_gemm_kernel.fn.warmup(pa, pa, out, n, n, n, n * n, n * n, n, 1, n, 1, n, 1,
                                      UPCAST=False, grid=(1,), **kw)
        elif kind == "regsplit":
            from suite.techniques.gemm_fp32_emulation.triton_regsplit_kernel import regsplit_gemm_kernel

            regsplit_gemm_kernel.fn.warmup(out, out, out, n, n, n, n, 1, n, 1, n, 1, UPCAST=False,
                                           grid=(1,), **kw)
        else:
            from suite.techniques.gemm_fp32_emulation.triton_gemm_kernel import gemm_kernel

            gemm_kernel.fn.warmup(out, out, out, n, n, n, n, 1, n, 1, n, 1, grid=(1,), **kw)
        return f"ok {time.perf_counter() - t0:5.1f}s {kind} {kw}"
    except Exception as exc:  # a config that cannot compile is the autotuner's business later
        return f"FAILED {kind} {kw}: {type(exc).__name__}: {str(exc)[:200]}"


def main(procs: int = 14) -> None:
    import multiprocessing as mp

    t0 = time.perf_counter()
    tasks = _tasks()
    with ProcessPoolExecutor(procs, mp_context=mp.get_context("spawn")) as pool:
        for line in pool.map(_compile, tasks):
            print(line, flush=True)
    print(f"warmed {len(tasks)} kernels in {time.perf_counter() - t0:.1f}s", flush=True)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 14)
