"""Block-scaled 4-bit formats against hand-worked cases (ties, saturation, zero blocks, subnormal and
clamped scales), and the torch-dtype path equal to the fp64 grid specification element for element."""
import pytest
import torch

from suite.techniques.block_scaled_formats import reference as R
from suite.techniques.block_scaled_formats import torch_qdq as Q
from suite.techniques.block_scaled_formats.formats import FORMATS

TIES = [(0.25, 0.0), (0.75, 1.0), (1.25, 1.0), (1.75, 2.0), (2.5, 2.0), (3.5, 4.0), (5.0, 4.0),
        (7.0, 6.0), (100.0, 6.0), (-2.5, -2.0), (-5.0, -4.0), (0.0, 0.0), (0.3, 0.5), (2.9, 3.0)]


@pytest.mark.parametrize("v,want", TIES)
def test_e2m1_rounds_to_nearest_even_code_and_saturates(v, want):
    x = torch.tensor([v])
    assert Q.unpack_fp4(Q.pack_fp4(Q.e2m1_codes(torch.tensor([v, 0.0])))).tolist()[0] == want
    assert R.nearest(x.double(), R.E2M1_GRID, 6.0).item() == want


def test_fp4_storage_is_two_codes_per_byte_low_nibble_first():
    packed = Q.pack_fp4(torch.tensor([1, 2, 15, 0], dtype=torch.uint8))
    assert packed.dtype == torch.float4_e2m1fn_x2 and packed.view(torch.uint8).tolist() == [0x21, 0x0F]
    assert Q.unpack_fp4(packed).tolist() == [0.5, 1.0, -6.0, 0.0]


def _block(values, n=32):
    x = torch.zeros(1, n)
    x[0, : len(values)] = torch.tensor(values)
    return x


def _both(x, fmt):
    got = Q.qdq(x, fmt)
    assert torch.equal(got.double(), R.spec_qdq(x, fmt)), fmt
    return got[0].tolist()


def test_mxfp4_scale_is_the_floor_power_of_two_and_the_top_clips():
    # amax 5: scale 2^(2-2) = 1; 5 is a tie between 4 and 6 (codes 6, 7) -> 4; 7 saturates to 6.
    assert _both(_block([5.0, 1.25, -0.25]), "mxfp4")[:3] == [4.0, 1.0, -0.0]
    assert _both(_block([7.0, 3.5]), "mxfp4")[:2] == [6.0, 4.0]
    # amax 0.75: scale 2^(-1-2) = 1/8, so 0.75 is 6 x 1/8 exactly.
    assert _both(_block([0.75, 0.1]), "mxfp4")[:2] == [0.75, 0.125]
    assert Q.e8m0(torch.tensor([5.0, 0.75, 0.0]), 2).view(torch.uint8).tolist() == [127, 124, 0]


def test_mxfp4_zero_block_and_clamped_tiny_scale():
    x = torch.cat([_block([]), _block([2.0 ** -130, 2.0 ** -129])], 1)
    # Zero block: scale 2^-127 (E8M0 code 0), zeros. Tiny block: 2^(-130-2) clamps to 2^-127, so
    # 2^-129 / 2^-127 = 0.25 is a tie between 0 and 0.5 -> 0, and everything flushes to zero.
    assert _both(x, "mxfp4") == [0.0] * 64
    assert Q.e8m0(torch.tensor([2.0 ** -130]), 2).view(torch.uint8).item() == 0


def test_nvfp4_two_level_scale_with_subnormal_and_underflowing_e4m3_block_scales():
    # Tensor amax 2688 = 6 x 448: the fp32 tensor scale is exactly 1, the first block's E4M3 scale 448.
    big = _block([2688.0, 1000.0], 16)
    # amax 6 x 2^-8: block scale 2^-8 is an E4M3 subnormal (2/8 x 2^-6); 0.01 / 2^-8 = 2.56 -> 3.
    sub = _block([6 * 2.0 ** -8, 0.01], 16)
    # amax 6 x 2^-10: block scale 2^-10 is half the smallest E4M3 subnormal, a tie -> 0: flushed.
    gone = _block([6 * 2.0 ** -10], 16)
    out = _both(torch.cat([big, sub, gone], 1), "nvfp4")
    assert out[:2] == [2688.0, 896.0]  # 1000 / 448 = 2.23 -> 2 -> 896
    assert out[16:18] == [6 * 2.0 ** -8, 3 * 2.0 ** -8]
    assert out[32:] == [0.0] * 16


def test_int4_and_bfp_ties_and_saturation():
    # Per tensor: scale 7 / 7 = 1: 2.5 -> 2, 3.5 -> 4, -0.5 -> -0.
    assert _both(_block([7.0, 2.5, 3.5, -0.5]), "int4_tensor")[:4] == [7.0, 2.0, 4.0, -0.0]
    # BFP: amax 7.9 has exponent 2, scale 2^0: 7.9 -> 8 saturates to 7; 1.5 -> 2 (tie to even).
    assert _both(_block([7.9, 1.5, 0.5]), "bfp4_block32")[:3] == [7.0, 2.0, 0.0]
    # amax 1: scale 2^-2; 0.3 / 0.25 = 1.2 -> 1.
    assert _both(_block([1.0, 0.3]), "bfp4_block32")[:2] == [1.0, 0.25]


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_all_zero_tensor_decodes_to_zeros(fmt):
    assert _both(torch.zeros(1, 128), fmt) == [0.0] * 128


@pytest.mark.parametrize("dist", ["gaussian", "student_t", "outlier"])
@pytest.mark.parametrize("role", ["weight", "activation"])
def test_torch_dtype_path_equals_the_grid_specification(dist, role):
    p = {"rows": 32, "cols": 512, "dist": dist, "role": role, "outlier_frac": 1 / 64, "outlier_scale": 50.0}
    for seed in range(4):
        x = R.make_inputs(p, seed, "cpu")["x"]
        for fmt in FORMATS:
            assert torch.equal(Q.qdq(x, fmt).double(), R.spec_qdq(x, fmt)), (fmt, seed)


def test_bits_per_element_charge_every_scale():
    bits = {name: f.bits(1024, 4096) for name, f in FORMATS.items()}
    assert bits["mxfp4"] == bits["bfp4_block32"] == 4.25
    assert bits["nvfp4"] == pytest.approx(4.5 + 32 / (1024 * 4096))
    assert bits["int4_block128"] == 4.125 and bits["int4_block32"] == 4.5
    assert bits["int4_channel"] == 4 + 16 / 4096 and bits["int4_tensor"] == pytest.approx(4.0, abs=1e-5)
    assert bits["fp8_e4m3_tensor"] == pytest.approx(8.0, abs=1e-5)


def test_outlier_mask_names_the_scaled_channels():
    p = {"rows": 16, "cols": 512, "dist": "outlier", "role": "activation", "outlier_frac": 1 / 64,
         "outlier_scale": 50.0}
    x = R.make_inputs(p, 3, "cpu")["x"]
    mask = R.outlier_columns(p, 3, "cpu")
    assert int(mask.sum()) == 8
    assert x[:, mask].abs().mean() > 20 * x[:, ~mask].abs().mean()
