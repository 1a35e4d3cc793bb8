"""Triton helpers that turn packed 4-bit codes (eight per int32, each stored as c = q + 8 in 0..15)
into bf16 MMA operands with no int-to-float conversion: 0x4300 | c is the bf16 bit pattern of
128 + c (its 7 mantissa bits hold c exactly)."""
import triton
import triton.language as tl

# One instance takes two words ($1, $2), the selector ($3, $4) and the shift ($5, $6) of two
# elements (the same constants twice) and returns both elements' bf16 in one register ($0, the first
# in the low half). prmt puts byte J // 2 of the first word in byte 0 and of the second in byte 2
# (selector nibbles 0..3 pick from the first word, 4..7 from the second); shr brings an odd nibble
# down; lop3 (a & b) | c (truth table 0xEA) keeps both nibbles and ors in 0x4300 twice. Each output
# depends on its own word only, so whichever two elements Triton pairs, the values are right; where
# it pairs K and K + 1 of an MMA operand (it does on sm_90), the register is the operand itself.
# Centred: minus 136 = 128 + 8 in bf16x2, exact (q in -8..7).
_UNPACK = tl.constexpr("{ .reg .b32 t; prmt.b32 t, $1, $2, $3; shr.b32 t, t, $5; "
           "lop3.b32 $0, t, 0x000F000F, 0x43004300, 0xEA; }")
_UNPACK_CENTRED = tl.constexpr("{ .reg .b32 t, b; prmt.b32 t, $1, $2, $3; shr.b32 t, t, $5; "
                   "lop3.b32 t, t, 0x000F000F, 0x43004300, 0xEA; mov.b32 b, 0x43084308; "
                   "sub.rn.bf16x2 $0, t, b; }")


@triton.jit
def bias_bf16(codes):
    """int32 codes c in 0..15 (any shape) -> bf16 128 + c, exact, by bit pattern."""
    return (codes | 0x4300).to(tl.int16).to(tl.bfloat16, bitcast=True)


@triton.jit
def nibble_bf16(words, J: tl.constexpr, CENTRED: tl.constexpr):
    """int32 words (any shape) -> bf16 of nibble J of each word: 128 + c, or q = c - 8 (CENTRED).
    Inline PTX, two words per instance (CUDA only; `nibble_fp32` is the interpreter's)."""
    sel = tl.full(words.shape, (J // 2) * 0x1111 + 0x4400, tl.int32)
    shift = tl.full(words.shape, 4 * (J % 2), tl.int32)
    if CENTRED:
        out = tl.inline_asm_elementwise(_UNPACK_CENTRED, "=r,r,r,r,r,r,r", [words, sel, shift],
                                        dtype=tl.bfloat16, is_pure=True, pack=2)
    else:
        out = tl.inline_asm_elementwise(_UNPACK, "=r,r,r,r,r,r,r", [words, sel, shift],
                                        dtype=tl.bfloat16, is_pure=True, pack=2)
    return out


@triton.jit
def nibble_fp32(words, J: tl.constexpr, CENTRED: tl.constexpr):
    """The same values as nibble_bf16, in fp32 by shifts (exact; for the interpreter)."""
    c = (words >> (4 * J)) & 0xF
    if CENTRED:
        out = (c - 8).to(tl.float32)
    else:
        out = (c + 128).to(tl.float32)
    return out



# An asynchronous L2 prefetch of `size` bytes (a multiple of 16, 16-byte aligned) with the
# evict_first cache policy (sm_90): weights read once, brought in ahead of their loads, marked to
# leave the L2 before lines another kernel left there (dirty ones cost a write-back each).
_BULK_PREFETCH_EVICT_FIRST = tl.constexpr(
    "{ .reg .b64 pol; .reg .pred p; setp.ne.b32 p, $2, 0; "
    "createpolicy.fractional.L2::evict_first.b64 pol, 1.0; "
    "@p cp.async.bulk.prefetch.L2.global.L2::cache_hint [$1], 64, pol; mov.b32 $0, 0; }")


@triton.jit
def prefetch_evict_first(ptrs, mask):
    """Asks the L2 for the 64 bytes at each of ptrs (16-byte aligned) where mask, evict_first;
    a hint (no wait, no result; CUDA only)."""
    tl.inline_asm_elementwise(_BULK_PREFETCH_EVICT_FIRST, "=r,l,r", [ptrs, mask.to(tl.int32)],
                              dtype=tl.int32, is_pure=False, pack=1)
