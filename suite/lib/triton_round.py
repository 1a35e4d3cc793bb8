"""Rounding helpers for Triton kernels run by the CPU interpreter, whose fp32 -> bf16 cast truncates."""
import triton
import triton.language as tl


@triton.jit
def round_bf16(x):
    """fp32 -> nearest-even bf16 value, kept in fp32 (the interpreter's cast truncates)."""
    bits = x.to(tl.uint32, bitcast=True)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return bits.to(tl.float32, bitcast=True)
