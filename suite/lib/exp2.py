"""The polynomial exp2 scheme in torch (fp32), its committed coefficients, and the hybrid's split.

The scheme (FlashAttention-4's software exp2): clamp x >= -127, n = floor(x), f = x - n in [0, 1),
p(f) = 1 + c1 f + ... + cd f^d by Horner in fp32 FMAs, then add n into p's exponent field with an
integer add. Coefficients: relative-error minimax with p(0) = 1, fitted by fit.py (Remez), rounded
to fp32. Max relative error (float64 evaluation of the fp32 coefficients, 2e5-point grid):
d=1 3.82e-2, d=2 2.05e-3, d=3 8.56e-5, d=4 2.90e-6, d=5 9.38e-8.
"""
from __future__ import annotations

import torch

_HEX = {
    1: ("0x1.d8dc72p-1",),
    2: ("0x1.54f8d6p-1", "0x1.51d9ccp-2"),
    3: ("0x1.63e658p-1", "0x1.d2378ap-3", "0x1.3baaa6p-4"),
    4: ("0x1.62d6c6p-1", "0x1.ee2450p-3", "0x1.abf868p-5", "0x1.b7f730p-7"),
    5: ("0x1.62e4bap-1", "0x1.ebdb56p-3", "0x1.c91ce6p-5", "0x1.277856p-7", "0x1.e974fap-10"),
}
COEFFS: dict[int, tuple[float, ...]] = {d: tuple(float.fromhex(h) for h in c) for d, c in _HEX.items()}
FIT_MAX_REL_ERR = {1: 3.822e-2, 2: 2.053e-3, 3: 8.560e-5, 4: 2.902e-6, 5: 9.377e-8}
MAGIC = 12582912.0  # 1.5 * 2**23: x + MAGIC puts floor(x) in the low mantissa bits
CLAMP = -127.0
UNITS = (8, 4, 2, 1, 1)  # a block is 16 units in sub-blocks of these sizes; any k/16 is a subset


def coeffs5(degree: int) -> tuple[float, float, float, float, float]:
    """c1..c5 for `degree`, zero-padded (the kernels take five constexpr coefficients)."""
    c = COEFFS[degree]
    return tuple(c) + (0.0,) * (5 - len(c))  # type: ignore[return-value]


def poly_mask(sixteenths: int) -> int:
    """Bit i set: sub-block i (sizes UNITS) goes to the polynomial; covers `sixteenths`/16 of a block."""
    mask, left = 0, sixteenths
    for i, u in enumerate(UNITS):
        if u <= left:
            mask, left = mask | (1 << i), left - u
    assert left == 0, sixteenths
    return mask


def exp2_poly_torch(x: torch.Tensor, degree: int) -> torch.Tensor:
    """The polynomial scheme in fp32 torch ops, elementwise; x float32 any shape -> float32."""
    x = torch.clamp_min(x.float(), CLAMP)
    n = torch.floor(x)
    f = x - n
    p = torch.full_like(f, COEFFS[degree][-1])
    for c in reversed((1.0,) + COEFFS[degree][:-1]):
        p = p * f + c
    bits = p.view(torch.int32) + (n.to(torch.int32) << 23)
    return bits.view(torch.float32)


def exp2_variant_torch(x: torch.Tensor, degree: int) -> torch.Tensor:
    """exp2 in fp32 by the polynomial of `degree`, or torch.exp2 when degree is 0."""
    return torch.exp2(x.float()) if degree == 0 else exp2_poly_torch(x, degree)
