"""The exp2 polynomial as a Triton device function (FlashAttention-4's software exp2 on the FMA
units) and a round-to-nearest bf16 cast that the interpreter gets right."""
import triton
import triton.language as tl
from triton.language.extra.cuda import libdevice


@triton.jit
def exp2_poly(x, DEGREE: tl.constexpr, C1: tl.constexpr, C2: tl.constexpr, C3: tl.constexpr,
              C4: tl.constexpr, C5: tl.constexpr, INTERPRET: tl.constexpr):
    """2**x for fp32 x <= 0 with no MUFU: floor split, Horner on the fraction, exponent add."""
    x = tl.maximum(x, -127.0)
    if INTERPRET:
        j = tl.floor(x) + 12582912.0  # equals add.rm(x, 1.5*2**23) exactly for |x| < 2**22
    else:
        j = libdevice.add_rd(x, 12582912.0)  # one FADD.RM: floor(x) lands in j's low mantissa bits
    f = x - (j - 12582912.0)  # both subtractions exact: f = x - floor(x) in [0, 1)
    # Horner on the fraction: one FMA per degree.
    if DEGREE == 1:
        p = tl.fma(f, C1, 1.0)
    elif DEGREE == 2:
        p = tl.fma(tl.fma(f, C2, C1), f, 1.0)
    elif DEGREE == 3:
        p = tl.fma(tl.fma(tl.fma(f, C3, C2), f, C1), f, 1.0)
    elif DEGREE == 4:
        p = tl.fma(tl.fma(tl.fma(tl.fma(f, C4, C3), f, C2), f, C1), f, 1.0)
    else:
        p = tl.fma(tl.fma(tl.fma(tl.fma(tl.fma(f, C5, C4), f, C3), f, C2), f, C1), f, 1.0)
    # j's bit pattern is 0x4B400000 + floor(x); its low 9 bits shifted by 23 are floor(x) << 23.
    bits = p.to(tl.int32, bitcast=True) + (j.to(tl.int32, bitcast=True) << 23)
    return bits.to(tl.float32, bitcast=True)


@triton.jit
def to_bf16(x, INTERPRET: tl.constexpr):
    """fp32 -> bf16 rounded to nearest even (the interpreter's own cast truncates)."""
    if INTERPRET:
        b = x.to(tl.int32, bitcast=True)
        b = (b + 0x7FFF + ((b >> 16) & 1)) & -65536
        x = b.to(tl.float32, bitcast=True)
    return x.to(tl.bfloat16)
