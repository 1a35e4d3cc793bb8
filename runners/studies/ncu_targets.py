"""One call of a kernel under study, between cudaProfilerStart and Stop after a warm-up, for Nsight Compute.

`decode [KV] [bf16] [omerge]`: the tuned decode step (triton_step.run with TUNED_ARGS, plain launches, no
graph) at KV slots, optionally with bf16 attention partials, or with the merge in the O launch (-k
regex:"decode_attn_mma|o_merge" --launch-count 2); `w4a16`: the W4A16 decode kernel (autotuned) on the 70B
up layer at M = 1, then M = 16. On the H200 (Firecracker hosts read the counters; leave the clocks alone):

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


def main(argv: list[str]) -> None:
    if argv[:1] == ["decode"]:
        _decode(int(argv[1]) if len(argv) > 1 and argv[1].isdigit() else 8192, "bf16" in argv, "omerge" in argv)
    elif argv[:1] == ["w4a16"]:
        _w4a16()
    else:
        sys.exit("usage: python3 -m runners.studies.ncu_targets decode [KV] [bf16] [omerge] | w4a16")


if __name__ == "__main__":
    main(sys.argv[1:])
