"""The TMA planes kernel: the schemes' sums under the interpreter on ragged shapes (TMA zero-fill at
the M, N and K tails), and its sm_90a build (Triton's bundled ptxas, no GPU): operands by TMA, no
spills, and few enough registers for three 4-warp CTAs an SM (the reason for the kernel)."""
import json
import os
import subprocess
import sys
from pathlib import Path

os.environ.setdefault("TRITON_INTERPRET", "1")  # before triton is imported by the kernel modules

import pytest  # noqa: E402
import torch  # noqa: E402

from suite.lib.planes import emulate  # noqa: E402
from suite.techniques.gemm_fp32_emulation import triton_tma_kernel as T  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("scheme", ["bf16x9", "bf16x6", "bf16x3"])
def test_sums_the_schemes_products_at_ragged_tails(scheme):
    g = torch.Generator().manual_seed(5)
    a, b = torch.randn(70, 112, generator=g), torch.randn(112, 88, generator=g)  # no dimension a tile multiple
    out = torch.full((70, 88), float("nan"))
    T.run(out, a, b, scheme)
    ref = a.double() @ b.double()
    err = ((out.double() - ref).norm() / ref.norm()).item()
    torch_err = ((emulate(a, b, scheme).double() - ref).norm() / ref.norm()).item()
    assert err <= 1.5 * torch_err + 2 ** -26  # only the summation order differs


SCRIPT = """
import json
from suite.lib.ptxas import usage
from suite.techniques.gemm_fp32_emulation import triton_tma_kernel as T
out = {}
for scheme in ("bf16x9", "bf16x3"):
    for c in T.configs_for(scheme):
        ptx = T.compile_sm90(scheme, c).asm["ptx"]
        key = f"{scheme} {c.kwargs['BM']} {c.kwargs['BN']} {c.kwargs['BK']} {c.num_stages} {c.num_warps}"
        out[key] = [*usage(ptx), ptx.count("cp.async.bulk.tensor"), ptx.count("ld.global")]
print(json.dumps(out))
"""


def test_sm90_build_uses_tma_and_leaves_room_for_three_ctas():
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env["PYTHONPATH"] = str(ROOT)
    proc = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env, cwd=ROOT,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert len(got) == 6
    for key, (regs, spills, tma, plain_loads) in got.items():
        assert spills == 0 and tma > 0 and plain_loads == 0, key
        assert regs <= 168, key  # 3 CTAs x 128 threads x 168 <= 64K registers
