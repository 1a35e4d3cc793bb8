"""The W4A16 decode kernel with a register cap (more programs resident per SM) against its autotuned
config and cuBLAS bf16, under the runner's timing (CUDA-graph replay, L2 flushed, protocol v4); every
config checked against the fp64 oracle first (a wrong sum is reported, not timed).

python3 -m runners.studies.w4a16_maxnreg --layers 70b_up --out w4a16_maxnreg.json
Imports only torch, triton and the suite (runs on the GPU host)."""
from __future__ import annotations

import argparse
import json

import torch

from runners.correctness import rel_err
from runners.timing import Protocol, measure
from suite.techniques.w4a16_gemm import _LLAMA
from suite.techniques.w4a16_gemm import reference as R
from suite.techniques.w4a16_gemm import triton_w4a16_decode as D

TILES = ((128, 4, 3), (128, 8, 3), (64, 8, 3))  # (BN, SPLIT_K, stages): the autotuner's pick and two more
CAPS = (None, 104, 96)  # 125 registers uncapped: 4 programs of 4 warps an SM; 104: 4, 96: 5
BAD = 3e-3  # the autotuned kernel's rel. error is 1.66e-3 on these inputs


def _us(fn) -> float:
    return measure(fn, "cuda", Protocol(), graph=True)[1]["median"] * 1e3


def case(layer: str, m: int) -> dict:
    """Median us of cuBLAS bf16, the autotuned kernel and each (tile, cap), or why a config is not timed."""
    n, k = _LLAMA[layer]
    inp = R.make_inputs({"m": m, "n": n, "k": k}, 0, "cuda")
    ref = R.reference(**inp)
    out = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
    row = {"layer": layer, "m": m, "cublas": _us(lambda: torch.mm(inp["a"], inp["w_bf16"].t(), out=out))}
    D.run(out, **inp)
    row["tuned_err"] = rel_err(out.double(), ref)
    row["tuned"] = _us(lambda: D.run(out, **inp))
    for bn, split, stages in TILES:
        for cap in CAPS:
            cfg = dict(BM=16, BN=bn, SPLIT_K=split, num_warps=4, num_stages=stages, **D.FAST,
                       **({"maxnreg": cap} if cap else {}))
            name = f"{bn}/{split}/{stages}/{cap}"

            def call(cfg=cfg):
                D.launch(out, inp["a"], inp["qweight_k16"], inp["scales"], kernel=D.decode_kernel, **cfg)
            try:
                out.zero_()
                call()
                torch.cuda.synchronize()
                err = rel_err(out.double(), ref)
                row[name] = round(_us(call), 2) if err <= BAD else f"wrong: rel. error {err:.3g}"
            except Exception as exc:  # a config that fails to compile is a result too
                row[name] = f"{type(exc).__name__}: {str(exc)[:120]}"
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--layers", default="70b_up", help="comma-separated keys of _LLAMA")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    rows = []
    for layer in args.layers.split(","):
        for m in (1, 16):
            rows.append(case(layer, m))
            print(json.dumps(rows[-1]), flush=True)
    with open(args.out, "w") as f:
        json.dump({"device": torch.cuda.get_device_name(), "torch": torch.__version__, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
