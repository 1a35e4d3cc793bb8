"""Each format through torch's storage dtypes: encode to what would be stored (E2M1 codes packed two
per byte as float4_e2m1fn_x2, E8M0 scales as float8_e8m0fnu, E4M3 as float8_e4m3fn, fp16/fp32 scales,
int8 codes), then decode that storage back to fp32."""
from __future__ import annotations

import torch

from suite.lib import int4
from suite.techniques.block_scaled_formats.formats import (E2M1_MAX, E4M3_MAX, E8M0_MAX, E8M0_MIN, EMAX_E2M1,
                                                           EMAX_INT4, FORMATS, INT4_MAX)

E2M1_VALUES = torch.tensor([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0])


def e2m1_codes(v: torch.Tensor) -> torch.Tensor:
    """fp32 -> 4-bit E2M1 codes (uint8, sign in bit 3), round to nearest even, saturating at 6.

    E2M1's spacing is 0.5 below 2, 1 in [2, 4), 2 in [4, 6]; rounding v / spacing half-to-even
    lands ties on the even code because code = value / spacing + offset with an even offset."""
    a = v.abs().clamp(max=E2M1_MAX)
    small = torch.round(a * 2)  # codes 0..4 (4 is 2.0)
    mid = torch.round(a) + 2  # 2 -> 4, 3 -> 5, 4 -> 6
    high = torch.round(a / 2) + 4  # 4 -> 6, 6 -> 7
    mag = torch.where(a < 2, small, torch.where(a < 4, mid, high)).to(torch.uint8)
    return mag | ((v < 0).to(torch.uint8) << 3)


def pack_fp4(codes: torch.Tensor) -> torch.Tensor:
    """(..., C) 4-bit codes -> (..., C/2) float4_e2m1fn_x2, element 2i in the low nibble."""
    return (codes[..., 0::2] | (codes[..., 1::2] << 4)).view(torch.float4_e2m1fn_x2)


def unpack_fp4(packed: torch.Tensor) -> torch.Tensor:
    """(..., C/2) float4_e2m1fn_x2 -> (..., C) fp32 values."""
    b = packed.view(torch.uint8)
    codes = torch.stack((b & 0xF, b >> 4), -1).flatten(-2)
    return E2M1_VALUES.to(b.device)[codes.long()]


def e8m0(amax: torch.Tensor, emax: int) -> torch.Tensor:
    """Block amax -> float8_e8m0fnu scale 2^(floor(log2 amax) - emax) (zero block: 2^-127).
    Built from the exponent bits: torch's cast to e8m0 rounds, the MX rule takes the floor."""
    e = torch.frexp(amax)[1] - 1 - emax
    e = torch.where(amax > 0, e, E8M0_MIN).clamp(E8M0_MIN, E8M0_MAX)
    return (e + 127).to(torch.uint8).view(torch.float8_e8m0fnu)


def _by_block(x: torch.Tensor, block: int) -> torch.Tensor:
    r, c = x.shape
    return x.reshape(1, 1, -1) if block == -1 else x.reshape(r, -1, c if block == 0 else block)


def _const(like: torch.Tensor, value: float) -> torch.Tensor:
    """A tensor divisor: on CUDA torch divides by a Python number through its reciprocal, which is
    not the correctly rounded quotient the specification's fp32 division gives."""
    return torch.full_like(like, value)


def _divide(x: torch.Tensor, s: torch.Tensor) -> torch.Tensor:
    return torch.where(s > 0, x / torch.where(s > 0, s, 1.0), 0.0)


def qdq(x: torch.Tensor, name: str) -> torch.Tensor:
    """x (R, C) fp32 -> (R, C) fp32 decoded from format `name`'s storage."""
    fmt = FORMATS[name]
    if fmt.element == "int4" and fmt.scale == "fp16":  # per-channel and blockwise INT4
        s = int4.group_scales(x, x.shape[1] if fmt.block == 0 else fmt.block)
        return int4.dequantize(int4.quantize(x, s), s)
    xb = _by_block(x.float(), fmt.block)
    amax = xb.abs().amax(-1, keepdim=True)
    if fmt.name == "nvfp4":
        s_tensor = amax.amax() / _const(amax.amax(), E2M1_MAX * E4M3_MAX)  # fp32, stored per tensor
        if s_tensor == 0:
            return torch.zeros_like(x)
        d = (amax / (E2M1_MAX * s_tensor)).clamp(max=E4M3_MAX).to(torch.float8_e4m3fn)  # RNE
        s = d.float() * s_tensor
    elif fmt.scale == "e8m0":
        s = e8m0(amax, EMAX_E2M1 if fmt.element == "e2m1" else EMAX_INT4).float()
    else:  # one fp32 scale for the tensor
        s = amax / _const(amax, INT4_MAX if fmt.element == "int4" else E4M3_MAX)
    v = _divide(xb, s)
    if fmt.element == "e2m1":
        values = unpack_fp4(pack_fp4(e2m1_codes(v)))
    elif fmt.element == "e4m3":
        values = v.clamp(-E4M3_MAX, E4M3_MAX).to(torch.float8_e4m3fn).float()
    else:
        values = torch.round(v).clamp(-INT4_MAX, INT4_MAX).to(torch.int8).float()
    return (values * s).reshape(x.shape)


def run(out: torch.Tensor, x: torch.Tensor, fmt: str) -> None:
    """out (R, C) fp32 = x (R, C) fp32 quantized to `fmt` and decoded."""
    out.copy_(qdq(x, fmt))
