"""The Gluon planes GEMM compiled for sm_90a on the CPU (no GPU: Triton's bundled ptxas): no spills, and
each K step's products issued as one asynchronous wgmma chain with one wait (Triton's tl.dot waits after
every product). Its results on the GPU: tests/test_gemm_fp32_h200.py."""
import os
import re
import subprocess
import tempfile

import pytest

pytestmark = pytest.mark.skipif(os.environ.get("TRITON_INTERPRET") == "1",
                                reason="compiling for sm_90 needs a process without TRITON_INTERPRET=1")


def _ptxas_usage(ptx: str) -> tuple[int, int]:
    """(registers per thread, spill bytes stored) that ptxas reports for sm_90a."""
    import triton

    tool = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", "ptxas")
    with tempfile.NamedTemporaryFile("w", suffix=".ptx") as f:
        f.write(ptx)
        f.flush()
        err = subprocess.run([tool, "-v", "--gpu-name=sm_90a", f.name, "-o", os.devnull], capture_output=True,
                             text=True, check=True).stderr
    return int(re.findall(r"Used (\d+) registers", err)[-1]), int(re.findall(r"(\d+) bytes spill stores", err)[-1])


@pytest.mark.parametrize("scheme", ["bf16x9", "bf16x6", "bf16x3"])
def test_one_wgmma_wait_per_k_step(scheme):
    from suite.techniques.gemm_fp32_emulation import gluon_planes_kernel as G

    config = G.CONFIGS[scheme]
    bk, overlap = config[2], config[5]
    ptx = G.compile_sm90(scheme).asm["ptx"]
    mma = re.findall(r"wgmma\.mma_async\S*", ptx)
    waits = re.findall(r"wgmma\.wait_group\.sync\.aligned (\d+)", ptx)
    # every product of the step in flight: NPROD dots of BK/16 k16 instructions each, one wait for all
    # (with overlap a second wait drains the last chain of a tile)
    assert len(mma) == G._NPROD[scheme] * bk // 16
    assert len(waits) == 1 + overlap
    assert ("wait_group.sync.aligned %d" % G._NPROD[scheme] in ptx) == bool(overlap)
    assert len(re.findall(r"cp\.async\.bulk\.tensor\.2d", ptx)) > 0  # operands arrive by TMA
    regs, spills = _ptxas_usage(ptx)
    assert spills == 0 and regs <= 255
