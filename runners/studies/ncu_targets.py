"""One call of a kernel under study, between cudaProfilerStart and Stop after a warm-up, for Nsight Compute.

`decode [KV] [bf16] [omerge]`: the tuned decode step (triton_step.run with TUNED_ARGS, plain launches, no
graph) at KV slots, optionally with bf16 attention partials, or with the merge in the O launch (-k
regex:"decode_attn_mma|o_merge" --launch-count 2); `emulation [N]`: the FP32-emulation GEMMs at N^3 (8192 by
default), BF16x9 / x6 / x3 on the planes, TMA and warp-specialised kernels after cuBLAS FP32 and bf16 (-k
regex:"plane|split|gemm|xmma|cutlass" --launch-count 20: cuBLAS's two GEMMs, then each scheme's split and GEMM
(plane_gemm_kernel, tma_plane_kernel, ws_plane_kernel), tensor-pipe and L2 shares side by side); `w4a16`: the
W4A16 decode kernel (autotuned) on the 70B up layer at M = 1, then M = 16. On the H200 (Firecracker hosts read the counters; leave the clocks alone):

ncu --clock-control none --profile-from-start off -k regex:decode_attn_mma --launch-count 1 \\
    --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats \\
    --section MemoryWorkloadAnalysis --section SchedulerStats --csv --page details \\
    python3 -m runners.studies.ncu_targets decode 8192 > attn.csv
(-k regex:gemv --launch-count 5: one layer's GEMVs; -k regex:decode_kernel --launch-count 2 with w4a16.)
Imports only torch, triton and the suite (runs on the GPU host)."""
from __future__ import annotations

import sys

import torch


def _profiled(calls) -> None:
    """Each call once to compile and autotune, then each once more between cudaProfilerStart and Stop."""
    for call in calls:
        call()
    torch.cuda.synchronize()
    torch.cuda.profiler.start()
    for call in calls:
        call()
    torch.cuda.synchronize()
    torch.cuda.profiler.stop()


def _decode(kv: int, bf16: bool, omerge: bool = False) -> None:
    from suite.techniques.decode_step import TUNED_ARGS
    from suite.techniques.decode_step.reference import empty_output, make_inputs
    from suite.techniques.decode_step.triton_step import run

    p = {"kv": kv}
    inp, out = make_inputs(p, 0, "cuda"), empty_output(p, "cuda")
    opts = {**TUNED_ARGS, **({"attn_part_bf16": True} if bf16 else {}), **({"o_merge": True} if omerge else {})}
    _profiled([lambda: run(out, **inp, **opts)])


def _w4a16() -> None:
    from suite.techniques.w4a16_gemm import _LLAMA
    from suite.techniques.w4a16_gemm.reference import empty_output, make_inputs
    from suite.techniques.w4a16_gemm.triton_w4a16_decode import run

    n, k = _LLAMA["70b_up"]
    calls = []
    for m in (1, 16):
        p = {"m": m, "n": n, "k": k}
        inp, out = make_inputs(p, 0, "cuda"), empty_output(p, "cuda")
        calls.append(lambda out=out, inp=inp: run(out, **inp))
    _profiled(calls)


def _emulation(n: int) -> None:
    from suite.techniques.gemm_fp32_emulation import cublas, triton_planes_kernel, triton_tma_kernel, triton_ws_kernel
    from suite.techniques.gemm_fp32_emulation.reference import empty_output, make_inputs

    p = {"m": n, "n": n, "k": n}
    inp, out = make_inputs(p, 0, "cuda"), empty_output(p, "cuda")
    a16, b16 = inp["a"].bfloat16(), inp["b"].bfloat16()
    calls = [lambda: cublas.run(out, inp["a"], inp["b"], precision="ieee"), lambda: torch.matmul(a16, b16)]
    for mod in (triton_planes_kernel, triton_tma_kernel, triton_ws_kernel):
        for scheme in ("bf16x9", "bf16x6", "bf16x3"):
            calls.append(lambda mod=mod, scheme=scheme: mod.run(out, inp["a"], inp["b"], scheme))
    _profiled(calls)


def main(argv: list[str]) -> None:
    if argv[:1] == ["decode"]:
        _decode(int(argv[1]) if len(argv) > 1 and argv[1].isdigit() else 8192, "bf16" in argv, "omerge" in argv)
    elif argv[:1] == ["w4a16"]:
        _w4a16()
    elif argv[:1] == ["emulation"]:
        _emulation(int(argv[1]) if len(argv) > 1 else 8192)
    else:
        sys.exit("usage: python3 -m runners.studies.ncu_targets decode [KV] [bf16] [omerge] | w4a16 | emulation [N]")


if __name__ == "__main__":
    main(sys.argv[1:])
