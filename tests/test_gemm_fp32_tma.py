"""The TMA planes kernel sums the schemes' products under the interpreter on ragged shapes (TMA
zero-fill at the M, N and K tails); its sm_90a build: tests/test_gemm_fp32_sm90_build.py."""
import os

os.environ.setdefault("TRITON_INTERPRET", "1")  # before triton is imported by the kernel modules

import pytest  # noqa: E402
import torch  # noqa: E402

from suite.lib.planes import emulate  # noqa: E402
from suite.techniques.gemm_fp32_emulation import triton_tma_kernel as T  # noqa: E402


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
