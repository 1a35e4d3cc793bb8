"""The warp-specialised TMA planes kernel (triton_ws_kernel): under the interpreter it sums the schemes'
products at ragged M, N and K tails with the step accumulator refreshed every 1, 2 or 3 K steps, also on a
persistent grid; compiled
for sm_90a on the CPU, its shipped configs are warp-specialised (setmaxnreg: a producer and consumer
warpgroups), load by TMA, do not spill, fit the H200's 227 KB of shared memory and store each consumer's half
of the tile from a row base Triton's warp specialisation does not shift twice."""
import os

os.environ.setdefault("TRITON_INTERPRET", "1")  # before triton is imported by the kernel modules

import pytest  # noqa: E402
import torch  # noqa: E402

from suite.lib.planes import emulate  # noqa: E402
from suite.techniques.gemm_fp32_emulation import triton_ws_kernel as W  # noqa: E402
from suite.techniques.gemm_fp32_emulation.triton_tiles import split  # noqa: E402
from tests.conftest import json_from_clean_process  # noqa: E402


@pytest.mark.parametrize("scheme", ["bf16x9", "bf16x6", "bf16x3"])
@pytest.mark.parametrize("refresh,persist", [(1, False), (2, False), (3, False), (2, True)])
def test_sums_the_schemes_products_at_ragged_tails(scheme, refresh, persist):
    g = torch.Generator().manual_seed(11)
    # K = 200: a partial refresh group; 2 x 2 tiles of 64 (interpreter), walked by 2 persistent programs
    a, b = torch.randn(70, 200, generator=g), torch.randn(200, 88, generator=g)
    out = torch.full((70, 88), float("nan"))
    W.gemm(split(a, scheme), split(b, scheme), out, scheme, dict(W.CONFIGS[scheme], REFRESH=refresh, PERSIST=persist))
    ref = a.double() @ b.double()
    err = ((out.double() - ref).norm() / ref.norm()).item()
    torch_err = ((emulate(a, b, scheme).double() - ref).norm() / ref.norm()).item()
    assert err <= 1.5 * torch_err + 2 ** -26  # only the summation order differs


def test_run_refuses_shapes_tma_cannot_load():
    with pytest.raises(ValueError):
        W.run(torch.empty(8, 12), torch.randn(8, 20), torch.randn(20, 12), "bf16x9")  # n = 12: rows not 16-byte


SCRIPT = """
import json
from suite.lib.ptxas import usage
from suite.techniques.gemm_fp32_emulation import triton_ws_kernel as W
out = {}
for scheme, cfg in W.CONFIGS.items():
    k = W.compile_sm90(scheme, cfg)
    ptx = k.asm["ptx"]
    out[scheme] = dict(usage=usage(ptx), shared=k.metadata.shared, maxnreg=ptx.count("setmaxnreg"),
                       opaque_rows=k.asm["ttgir"].count('tt.elementwise_inline_asm "mov.b32'),
                       tma=ptx.count("cp.async.bulk.tensor"), plain=ptx.count("ld.global"))
print(json.dumps(out))
"""


def test_shipped_configs_build_warp_specialised_for_sm90():
    built = json_from_clean_process(SCRIPT)
    assert set(built) == {"bf16x9", "bf16x6", "bf16x3"}
    for scheme, k in built.items():
        regs, spills = k["usage"]
        assert spills == 0 and k["tma"] > 0 and k["plain"] == 0, scheme
        assert k["shared"] <= 227 * 1024, scheme
        assert (k["maxnreg"] > 0) == W.CONFIGS[scheme]["WS"], scheme
        # each consumer warpgroup stores its half of the tile from an opaque row base (see _store)
        assert k["opaque_rows"] == (2 if W.CONFIGS[scheme]["WS"] else 0), scheme
