"""Launch-configuration sweep of the compute-bound exp2 kernels on a GPU (not part of the runner).

`KWATCH_GIT_COMMIT=<commit> python -m runners.studies.exp_approx_microbench OUT.json` times the
"sum" and "chain" kernels for MUFU-only, polynomial-only and hybrid splits at a few (U, num_warps) under
runners/timing.py's protocol (runners/studies/timed.py), and writes T exp/s per configuration and the
commit, so the runner's fixed configuration (U=128, 4 warps) can be set beside the others.
"""
from __future__ import annotations

import json
import os
import statistics
import sys

import torch

from runners.studies.timed import timed
from suite.techniques.exp_approx.common import exp2_chain_kernel, exp2_sum_kernel, variant_args

N, TERMS = 1 << 23, 64


def sweep(configs, fractions, degree: int = 3, on_row=None) -> list[dict]:
    """Rows {kind, u, num_warps, sixteenths, degree, texp_per_s, samples_ms} for every combination;
    on_row(rows) after each."""
    x_sum = -8.0 * torch.rand(N, device="cuda")
    x_chain = -1.0 + 0.5 * torch.rand(N, device="cuda")
    out = torch.empty(N, device="cuda")
    rows = []
    for kind, kernel, x, arg in (("chain", exp2_chain_kernel, x_chain, 1.5),
                                 ("sum", exp2_sum_kernel, x_sum, 0.0625)):
        for u, warps in configs:
            for k in fractions:
                args = variant_args(degree if k else 0, k)
                grid = (triton_cdiv(N, 16 * u),)
                fn = lambda: kernel[grid](x, out, N, TERMS, arg, U=u, num_warps=warps, **args)
                ms, stats = timed(fn, "cuda")
                rows.append({"kind": kind, "u": u, "num_warps": warps, "sixteenths": k,
                             "degree": degree if k else 0, "samples_ms": ms, "protocol": stats["protocol"],
                             "texp_per_s": N * TERMS / (statistics.median(ms) * 1e-3) / 1e12})
                print(json.dumps({k2: v for k2, v in rows[-1].items() if k2 != "samples_ms"}), flush=True)
                if on_row:
                    on_row(rows)
    return rows


def triton_cdiv(a: int, b: int) -> int:
    return -(-a // b)


def _write(rows: list[dict]) -> None:
    with open(sys.argv[1], "w") as f:
        json.dump({"gpu": torch.cuda.get_device_name(0), "torch": torch.__version__,
                   "commit": os.environ.get("KWATCH_GIT_COMMIT"),
                   "n": N, "terms": TERMS, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    sweep([(64, 4), (128, 8)], [0, 5, 6, 7, 8, 16], on_row=_write)
