"""Compile the exp2 kernels for sm_90 without a GPU (Triton + its bundled ptxas) and count SASS opcodes.

`python -m suite.techniques.exp_approx.asm` prints, per variant, the opcode counts in the inner
loop of the compute-bound kernel: MUFU.EX2, FFMA, FADD, ... so one can see that the polynomial
is emitted as FMAs on the FP32 pipe and that MUFU.EX2 appears only where intended.
"""
from __future__ import annotations

import collections
import os
import re
import subprocess
import tempfile


def compile_sum_kernel(degree: int, sixteenths: int, u: int = 128, kind: str = "sum", num_warps: int = 4):
    """The compiled exp2_sum_kernel or exp2_chain_kernel (`kind`) for sm_90, variant (degree, k/16)."""
    if os.environ.get("TRITON_INTERPRET") == "1":
        raise RuntimeError("compiling for sm_90 needs a process without TRITON_INTERPRET=1")
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    from suite.techniques.exp_approx import common

    args = common.variant_args(degree, sixteenths)
    args["INTERPRET"] = False
    consts = dict(U=u, **args)
    last = "delta" if kind == "sum" else "shift"
    sig = {"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32", "terms": "i32", last: "fp32"}
    sig.update({k: "constexpr" for k in consts})
    fn = common.exp2_sum_kernel if kind == "sum" else common.exp2_chain_kernel
    src = ASTSource(fn=fn, signature=sig, constexprs=consts)
    return triton.compile(src, target=GPUTarget("cuda", 90, 32), options={"num_warps": num_warps})


def sass(kernel) -> str:
    """SASS text of a compiled kernel, by the nvdisasm that ships with Triton."""
    return sass_of_cubin(kernel.asm["cubin"])


def sass_of_cubin(cubin: bytes) -> str:
    """SASS text of a cubin (bytes), by the nvdisasm that ships with Triton."""
    import triton

    tool = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", "nvdisasm")
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(cubin)
        f.flush()
        return subprocess.run([tool, "-c", f.name], capture_output=True, text=True, check=True).stdout


def cached_loop_opcodes(prefix: str = "exp2_") -> list[tuple[str, dict]]:
    """(cubin path, loop opcode counts) for every kernel named prefix* in Triton's cache: what this
    host actually compiled and ran."""
    import glob

    import triton

    out = []
    for path in sorted(glob.glob(os.path.join(triton.knobs.cache.dir, "*", prefix + "*.cubin"))):
        with open(path, "rb") as f:
            out.append((path, dict(loop_opcodes(sass_of_cubin(f.read())))))
    return out


def loop_opcodes(text: str) -> collections.Counter:
    """Opcode counts (e.g. 'MUFU.EX2', 'FFMA', 'FADD.RM') inside the kernel's main loop (the
    longest block ending in a backward branch)."""
    lines = [ln for ln in text.splitlines() if re.search(r"/\*[0-9a-f]{4,}\*/", ln)]
    labels = {}
    body: list[str] = []
    best: list[str] = []
    for ln in text.splitlines():
        m = re.match(r"\s*\.(L\w+):", ln)
        if m:
            labels[m.group(1)] = len(body)
            body.append(ln)
            continue
        body.append(ln)
        b = re.search(r"\bBRA\b.*`?\(?\.?(L\w+)", ln)
        if b and b.group(1) in labels:
            seg = body[labels[b.group(1)]:]
            if len(seg) > len(best):
                best = seg
    del lines
    ops = collections.Counter()
    for ln in best:
        m = re.search(r"\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)", ln)
        if m:
            ops[m.group(1)] += 1
    return ops


if __name__ == "__main__":
    for kind in ("sum", "chain"):
        for degree, k in [(0, 0), (1, 16), (2, 16), (3, 16), (4, 16), (5, 16), (3, 4), (3, 5), (3, 6), (3, 8)]:
            ops = loop_opcodes(sass(compile_sum_kernel(degree, k, kind=kind)))
            keep = {o: c for o, c in sorted(ops.items()) if c > 1}
            print(f"{kind} degree {degree} poly {k}/16: {sum(ops.values())} instr in loop (16 exp2 per"
                  f" thread); {keep}")
