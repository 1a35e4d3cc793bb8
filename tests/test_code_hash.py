"""impl_hash follows the code an implementation imports, and nothing else."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from runners.code_hash import import_closure
from suite.registry import get

ROOT = Path(__file__).resolve().parent.parent


def _rel(paths) -> set[str]:
    return {p.as_posix().rsplit("/suite/", 1)[-1] for p in paths}


def test_closure_holds_the_shared_library_and_not_the_neighbours():
    needle = _rel(import_closure(get("needle_retrieval").impl("triton_mean_pool").target.partition(":")[0]))
    assert {"lib/selectors.py", "lib/block_sparse.py", "lib/block_sparse_kernel.py"} <= needle
    cublas = _rel(import_closure(get("gemm_fp32_emulation").impl("cublas_fp32").target.partition(":")[0]))
    assert "techniques/gemm_fp32_emulation/warm_cache.py" not in cublas
    assert not any(p.endswith(("reference.py", "claims.py", "__init__.py")) for p in cublas | needle)


def test_importing_from_a_package_does_not_pull_in_its_spec():
    # `from suite.techniques.w4a16_gemm import triton_w4a16_decode`: the module is code, the package's
    # __init__ (the technique spec, which imports suite.spec) is not, nor is what only it imports
    streamk = _rel(import_closure(get("w4a16_gemm").impl("triton_w4a16_streamk").target.partition(":")[0]))
    assert "techniques/w4a16_gemm/triton_w4a16_decode.py" in streamk
    assert not {"spec.py", "ceilings.py", "techniques/w4a16_gemm/__init__.py"} & streamk, sorted(streamk)


def _hashes(root: Path) -> dict[str, str]:
    code = ("import json; from suite.registry import get; from runners.code_hash import impl_hash; "
            "t = {n: get(n) for n in ('needle_retrieval', 'gemm_fp32_emulation')}; "
            "print(json.dumps({f'{n}/{i.name}': impl_hash(x, i) for n, x in t.items() for i in x.impls}))")
    out = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True,
                         env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(root)}, check=True)
    return json.loads(out.stdout)


def test_hash_changes_exactly_when_imported_code_changes(tmp_path):
    for top in ("suite", "runners"):
        shutil.copytree(ROOT / top, tmp_path / top, ignore=shutil.ignore_patterns("__pycache__", "*.pt"))
    before = _hashes(tmp_path)
    sel = tmp_path / "suite/lib/selectors.py"
    sel.write_text(sel.read_text() + "\n# an edit\n")
    warm = tmp_path / "suite/techniques/gemm_fp32_emulation/warm_cache.py"
    if warm.exists():
        warm.write_text(warm.read_text() + "\n# an edit\n")
    after = _hashes(tmp_path)
    changed = {k for k in before if before[k] != after[k]}
    assert changed == {k for k in before if k.startswith("needle_retrieval/")}
