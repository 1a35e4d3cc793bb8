"""The FP32-emulation kernels compiled for sm_90a on the CPU (no GPU: Triton's bundled ptxas, in a process
without TRITON_INTERPRET). The TMA planes kernel: operands by TMA, no spills, few enough registers for
three 4-warp CTAs an SM (the reason for it). The Gluon planes GEMM (an experiment, not an implementation:
its H200 sweep is docs/data/h200_gemm_fp32_emulation_tune_95e94ce.json): each K step's products issued
as one asynchronous wgmma chain with one wait, where Triton's tl.dot waits after every product."""
import pytest

from tests.conftest import json_from_clean_process

SCRIPT = """
import json, re
from suite.lib.ptxas import usage
from suite.techniques.gemm_fp32_emulation import gluon_planes_kernel as G, triton_tma_kernel as T
out = {"tma": {}, "gluon": {}}
for scheme in ("bf16x9", "bf16x3"):
    for c in T.configs_for(scheme):
        ptx = T.compile_sm90(scheme, c).asm["ptx"]
        key = f"{scheme} {c.kwargs['BM']} {c.kwargs['BN']} {c.kwargs['BK']} {c.num_stages} {c.num_warps}"
        out["tma"][key] = [*usage(ptx), ptx.count("cp.async.bulk.tensor"), ptx.count("ld.global")]
    for overlap in (0, 1):
        ptx = G.compile_sm90(scheme, (128, 128, 32, 4, 8, overlap, 1, 1)).asm["ptx"]
        out["gluon"][f"{scheme} {overlap}"] = dict(
            mma=len(re.findall(r"wgmma\\.mma_async", ptx)), tma=ptx.count("cp.async.bulk.tensor"),
            waits=re.findall(r"wgmma\\.wait_group\\.sync\\.aligned (\\d+)", ptx), usage=usage(ptx))
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def built():
    return json_from_clean_process(SCRIPT)


def test_tma_kernel_uses_tma_and_leaves_room_for_three_ctas(built):
    assert len(built["tma"]) == 6
    for key, (regs, spills, tma, plain_loads) in built["tma"].items():
        assert spills == 0 and tma > 0 and plain_loads == 0, key
        assert regs <= 168, key  # 3 CTAs x 128 threads x 168 <= 64K registers


def test_gluon_kernel_waits_once_per_k_step(built):
    for key, k in built["gluon"].items():
        nprod = 9 if key.startswith("bf16x9") else 3
        # every product of the step in flight: NPROD dots of BK/16 = 2 k16 instructions, one wait for all;
        # with overlap the wait leaves this step's NPROD in flight and a second one drains a tile's last
        assert k["mma"] == 2 * nprod, key
        assert sorted(k["waits"]) == sorted([str(nprod), "0"] if key.endswith("1") else ["0"]), key
        regs, spills = k["usage"]
        assert k["tma"] > 0 and spills == 0 and regs <= 255, key
