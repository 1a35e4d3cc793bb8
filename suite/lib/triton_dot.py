"""Dot and store helpers for bf16 Triton GEMM kernels that also run on the CPU interpreter, whose bf16
dot is wrong and whose fp32 -> bf16 cast truncates."""
import triton
import triton.language as tl

from suite.lib.triton_round import round_bf16


@triton.jit
def dot_acc(acc, a, b, UPCAST: tl.constexpr):
    """acc + a @ b for bf16 tiles a, b and an fp32 acc; with UPCAST (the interpreter) in fp32, exact for
    bf16 inputs."""
    if UPCAST:
        return acc + tl.dot(a.to(tl.float32), b.to(tl.float32), input_precision="ieee")
    else:
        return acc + tl.dot(a, b)


@triton.jit
def rounded_for_store(acc, UPCAST: tl.constexpr):
    """acc as a bf16 store will hold it: rounded to nearest even first under the interpreter (UPCAST)."""
    if UPCAST:
        return round_bf16(acc)
    else:
        return acc
