"""Compile every Triton kernel variant of this technique in parallel processes, filling Triton's
on-disk cache before a run (the autotuner would otherwise compile config after config in one
process). Usage on a GPU host: python3 -m suite.techniques.gemm_fp32_emulation.warm_cache [procs [impl ...]]."""
from __future__ import annotations

import importlib
import multiprocessing as mp
import sys
import time
from concurrent.futures import ProcessPoolExecutor

from suite.techniques.gemm_fp32_emulation import TECHNIQUE


def configs(module, variant: dict) -> list:
    """The autotune configs a variant of a kernel module tries (all of them where none is pruned)."""
    return module.configs_for(**variant) if hasattr(module, "configs_for") else module.autotune_configs()


def tasks(impls: tuple[str, ...] = ()) -> list[tuple[str, dict, int]]:
    """(kernel module, variant args, config index) for each config of each Triton variant of the
    technique (of the named implementations only, when given): the variants are its implementations' args."""
    out = []
    for impl in TECHNIQUE.impls:
        if impls and impl.name not in impls:
            continue
        module = importlib.import_module(impl.target.partition(":")[0])
        if hasattr(module, "compile_for"):
            out += [(module.__name__, dict(impl.args), i) for i in range(len(configs(module, impl.args)))]
    return out


def compile_one(task: tuple[str, dict, int]) -> str:
    """Compile one (module, variant, config index); a line saying how it went."""
    name, variant, i = task
    module = importlib.import_module(name)
    config = configs(module, variant)[i]
    t0 = time.perf_counter()
    what = f"{name.rsplit('.', 1)[-1]} {variant} {config}"
    try:
        module.compile_for(config, **variant)
        return f"ok {time.perf_counter() - t0:5.1f}s {what}"
    except Exception as exc:  # a config that cannot compile is the autotuner's business later
        return f"FAILED {what}: {type(exc).__name__}: {str(exc)[:200]}"


def main(procs: int = 14, impls: tuple[str, ...] = ()) -> None:
    t0 = time.perf_counter()
    todo = tasks(impls)
    with ProcessPoolExecutor(procs, mp_context=mp.get_context("spawn")) as pool:
        for line in pool.map(compile_one, todo):
            print(line, flush=True)
    print(f"warmed {len(todo)} kernels in {time.perf_counter() - t0:.1f}s", flush=True)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 14, tuple(sys.argv[2:]))
