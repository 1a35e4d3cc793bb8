"""The Gluon planes GEMM compiled for sm_90a on the CPU (no GPU: Triton's bundled ptxas, in a process
without TRITON_INTERPRET): no spills, and each K step's products issued as one asynchronous wgmma chain
with one wait (Triton's tl.dot waits after every product). The kernel is an experiment, not an
implementation of the technique: its H200 sweep is docs/data/h200_gemm_fp32_emulation_tune_95e94ce.json."""
import json
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

SCRIPT = """
import json, re
from suite.lib.ptxas import usage
from suite.techniques.gemm_fp32_emulation import gluon_planes_kernel as G
out = {}
for scheme, nprod in (("bf16x9", 9), ("bf16x3", 3)):
    for overlap in (0, 1):
        config = (128, 128, 32, 4, 8, overlap, 1, 1)
        ptx = G.compile_sm90(scheme, config).asm["ptx"]
        out[f"{scheme} {overlap}"] = dict(
            mma=len(re.findall(r"wgmma\\.mma_async", ptx)), tma=ptx.count("cp.async.bulk.tensor"),
            waits=re.findall(r"wgmma\\.wait_group\\.sync\\.aligned (\\d+)", ptx), usage=usage(ptx), nprod=nprod)
print(json.dumps(out))
"""


def test_one_wgmma_wait_per_k_step():
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env["PYTHONPATH"] = str(ROOT)
    proc = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env, cwd=ROOT,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    for key, k in got.items():
        overlap = key.endswith("1")
        # every product of the step in flight: NPROD dots of BK/16 = 2 k16 instructions, one wait for all;
        # with overlap the wait leaves this step's NPROD in flight and a second wait drains a tile's last
        assert k["mma"] == 2 * k["nprod"], key
        assert sorted(k["waits"]) == sorted([str(k["nprod"]), "0"] if overlap else ["0"]), key
        assert k["tma"] > 0, key
        regs, spills = k["usage"]
        assert spills == 0 and regs <= 255, key
