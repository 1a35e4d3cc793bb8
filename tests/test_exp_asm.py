"""The compiled sm_90 code (Triton + its bundled ptxas, no GPU needed): the polynomial is FMAs and
no MUFU.EX2, the hardware variant is MUFU.EX2, a hybrid has both in its split's proportion."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = """
import json
from suite.techniques.exp_approx.asm import compile_sum_kernel, loop_opcodes, sass
out = {}
for kind, degree, k in [("sum", 0, 0), ("sum", 3, 16), ("sum", 5, 16), ("chain", 3, 5)]:
    out[f"{kind}/{degree}/{k}"] = loop_opcodes(sass(compile_sum_kernel(degree, k, kind=kind)))
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def opcodes():
    try:
        import triton

        if not os.path.exists(os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", "ptxas")):
            pytest.skip("Triton's bundled ptxas is missing")
    except ImportError:
        pytest.skip("no triton")
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env["PYTHONPATH"] = str(ROOT)
    proc = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env,
                          cwd=ROOT, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_mufu_variant_is_one_ex2_per_element(opcodes):
    ops = opcodes["sum/0/0"]
    assert ops.get("MUFU.EX2") == 16  # 16 elements per thread per iteration
    assert "FFMA" not in ops and "FADD.FTZ.RM" not in ops


@pytest.mark.parametrize("degree", [3, 5])
def test_polynomial_is_fma_and_never_mufu(degree, opcodes):
    ops = opcodes[f"sum/{degree}/16"]
    assert "MUFU.EX2" not in ops
    assert ops["FFMA"] == 16 * degree  # Horner: one FMA per degree, nothing rewritten to MUFU
    assert ops["FADD.FTZ.RM"] == 16  # the floor split is one round-down add, not FRND/F2I
    assert not any(o.startswith(("FRND", "F2I", "I2F")) for o in ops)


def test_hybrid_split_in_the_machine_code(opcodes):
    ops = opcodes["chain/3/5"]
    assert ops["MUFU.EX2"] == 11 and ops["FFMA"] == 15  # 5/16 polynomial, 11/16 MUFU
