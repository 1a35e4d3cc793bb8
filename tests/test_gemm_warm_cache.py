"""warm_cache compiles one config of one variant per task, through the kernel files' public
compile_for (and configs_for where a variant prunes its configs), for exactly the Triton variants the
technique declares."""
import importlib
import os

os.environ.setdefault("TRITON_INTERPRET", "1")  # before triton is imported by the kernel modules

from suite.techniques.gemm_fp32_emulation import TECHNIQUE, warm_cache  # noqa: E402


def test_tasks_cover_every_triton_variant_and_each_config_once():
    todo = warm_cache.tasks()
    variants = {(m.rsplit(".", 1)[-1], tuple(sorted(v.items()))) for m, v, _ in todo}
    triton_impls = [i for i in TECHNIQUE.impls if "triton" in i.requires]
    assert len(variants) == len(triton_impls) == 23
    assert len(todo) == len(set((m, tuple(sorted(v.items())), i) for m, v, i in todo))


def test_compile_for_takes_every_variant_and_config_by_name():
    # Under the interpreter warmup compiles nothing; the kernels' heuristics still read the named
    # arguments (K, BK) and each variant's configs resolve as on the GPU. The GPU compile is not run here.
    for name, variant, i in warm_cache.tasks():
        module = importlib.import_module(name)
        module.compile_for(warm_cache.configs(module, variant)[i], n=32, device="cpu", **variant)
