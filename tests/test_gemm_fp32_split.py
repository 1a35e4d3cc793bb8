"""FP32 emulation kernels on the CPU (Triton interpreter): the split into planes is exact and
matches the torch reference bit for bit, and each kernel sums exactly its scheme's piece products."""
import os

os.environ.setdefault("TRITON_INTERPRET", "1")  # before triton is imported by the kernel modules

import pytest
import torch

from suite.lib.planes import SCHEMES, emulate, round_tf32, split


def _x(n=4096, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, generator=g) * torch.exp2(torch.randint(-100, 100, (n,), generator=g).float())
    x[:6] = torch.tensor([1 + 2 ** -8, 1 + 3 * 2 ** -8, 2.0 ** -130, (1 + 2 ** -12) * 2 ** -118, -3e38, 0.0])
    return x.reshape(64, 64)


@pytest.mark.parametrize("scheme", ["bf16x3", "bf16x9", "tf32x3"])
def test_planes_match_torch_split_bit_for_bit(scheme):
    from suite.techniques.gemm_fp32_emulation.triton_tiles import split as split_planes

    x = _x()
    planes = split_planes(x, scheme)
    ref = split(x, SCHEMES[scheme][0], round_tf32 if scheme == "tf32x3" else None) if scheme == "tf32x3" \
        else split(x, SCHEMES[scheme][0])
    got = planes.float()
    for p, r in zip(got, ref):
        assert torch.equal(p.view(torch.int32), r.view(torch.int32))  # bit patterns, denormals included


def test_three_bf16_pieces_hold_every_normal_fp32_exactly():
    x = _x()
    x = x[(x.abs() > 2.0 ** -100) & (x.abs() < 2.0 ** 100)]
    hi, mid, lo = split(x, 3)
    assert torch.equal(hi + mid + lo, x)
    assert torch.equal(hi.bfloat16().float(), hi) and torch.equal(lo.bfloat16().float(), lo)
    # two pieces keep ~17 bits: the dropped rest is below 2**-16 of x
    h2, l2 = split(x, 2)
    assert ((x - h2 - l2).abs() <= x.abs() * 2.0 ** -16).all()


@pytest.mark.parametrize("kernel", ["planes", "cat"])
@pytest.mark.parametrize("scheme", ["bf16x3", "bf16x6", "bf16x9"])
def test_kernel_sums_exactly_the_scheme_products(kernel, scheme):
    """One-hot planes: A plane i and B plane j all ones, the rest zero; out = K iff (i, j) is kept."""
    from suite.techniques.gemm_fp32_emulation import triton_cat_kernel, triton_planes_kernel

    pieces, pairs = SCHEMES[scheme]
    m = n = k = 32
    for i in range(pieces):
        for j in range(pieces):
            pa = torch.zeros(pieces, m, k, dtype=torch.bfloat16)
            pb = torch.zeros(pieces, k, n, dtype=torch.bfloat16)
            pa[i], pb[j] = 1.0, 1.0
            out = torch.full((m, n), float("nan"))
            if kernel == "planes":
                triton_planes_kernel.gemm(pa, pb, out, scheme)
            else:
                triton_cat_kernel.gemm(pa, pb, out, scheme)
            want = float(k) if (i, j) in pairs else 0.0
            assert torch.all(out == want), (kernel, scheme, i, j, out[0, 0].item())


@pytest.mark.parametrize("impl", ["triton_bf16x9", "triton_bf16x6", "triton_bf16x3", "triton_tf32x3",
                                  "triton_bf16x6_regsplit", "triton_bf16x3_cat"])
def test_kernels_agree_with_torch_emulation(impl):
    from suite.registry import get
    from suite.spec import implementation

    scheme = impl.split("_")[1]
    g = torch.Generator().manual_seed(1)
    a, b = torch.randn(48, 80, generator=g), torch.randn(80, 40, generator=g)  # tails in every dim
    out = torch.full((48, 40), float("nan"))
    implementation(get("gemm_fp32_emulation").impl(impl))(out, a=a, b=b)
    ref = emulate(a, b, scheme)
    exact = (a.double() @ b.double()).float()
    # same products, only fp32 summation order differs
    assert (out - ref).abs().max() <= 4 * 2.0 ** -24 * (a.abs() @ b.abs()).max()
    assert (out - exact).norm() / exact.norm() < {"bf16x3": 2e-5}.get(scheme, 1e-6)


def test_wrong_product_set_is_caught_by_the_tolerance():
    """x3 judged in the x9 class fails: dropping products is visible at fp32 accuracy."""
    from suite.techniques.gemm_fp32_emulation.reference import lowp_bf16x9, reference

    g = torch.Generator().manual_seed(2)
    a, b = torch.randn(64, 64, generator=g), torch.randn(64, 64, generator=g)
    ref = reference(a, b)
    err = lambda o: ((o.double() - ref).norm() / ref.norm()).item()
    assert err(emulate(a, b, "bf16x3")) > 4 * err(lowp_bf16x9(a, b))
    assert err(emulate(a, b, "bf16x9")) <= 4 * err(lowp_bf16x9(a, b))
