"""The L2 flush under the runner's own timing path: the same calls timed after a flush that writes
2 x L2 bytes (protocol v3, flush_mode "zero") and after one that reads them ("read"), alternated
rounds in one process, on memory-bound calls of 16 MB-2.7 GB (the fused norms at hidden 2048, device
copies, the decode step). Each call checked against its reference first.

python3 -m runners.studies.flush_protocol --out FILE [--rounds 4] [--no-decode]
Imports only torch, triton and torch-only project modules (runs on the GPU host)."""
from __future__ import annotations

import argparse
import json
import time

import torch

from runners.correctness import rel_err
from runners.timing import Protocol, measure
from suite.lib.bandwidth import copy_gbps
from suite.lib.norm_triton import norm


def _norm_calls(t: int = 16384, h: int = 2048) -> dict:
    """name -> (call, bytes moved); ours at hidden h, T tokens, bf16, checked against torch in fp32."""
    g = torch.Generator(device="cuda").manual_seed(0)
    x = torch.randn(t, h, device="cuda", generator=g).to(torch.bfloat16)
    r = torch.randn(t, h, device="cuda", generator=g).to(torch.bfloat16)
    w = (1 + 0.1 * torch.randn(h, device="cuda", generator=g)).to(torch.bfloat16)
    b = (0.1 * torch.randn(h, device="cuda", generator=g)).to(torch.bfloat16)
    y, hh = torch.empty_like(x), torch.empty_like(x)
    xb = x.numel() * 2
    calls = {
        "rmsnorm_16384x2048": (lambda: norm(y, x, w), 2 * xb,
                               lambda: torch.nn.functional.rms_norm(x.float(), (h,), w.float(), 1e-6)),
        "layernorm_16384x2048": (lambda: norm(y, x, w, b, layer=True), 2 * xb,
                                 lambda: torch.nn.functional.layer_norm(x.float(), (h,), w.float(), b.float(), 1e-6)),
        "rmsnorm_residual_16384x2048": (lambda: norm(y, x, w, residual=r, h=hh), 4 * xb,
                                        lambda: torch.nn.functional.rms_norm(x.float() + r.float(), (h,), w.float(),
                                                                             1e-6)),
    }
    out = {}
    for name, (call, nbytes, ref) in calls.items():
        call()
        err = rel_err(y.float(), ref())
        assert err < 1e-2, (name, err)
        out[name] = (call, nbytes)
    return out


def _copy_calls() -> dict:
    """name -> (call, bytes read + written): device-to-device copies of 16 MB to 1 GiB."""
    out = {}
    for mb in (16, 64, 256, 1024):
        src = torch.randint(0, 255, (mb << 20,), dtype=torch.uint8, device="cuda")
        dst = torch.empty_like(src)
        dst.copy_(src)
        assert torch.equal(dst, src)
        out[f"copy_{mb}MiB"] = ((lambda d=dst, s=src: d.copy_(s)), 2 * (mb << 20))
    return out


def _decode_calls() -> dict:
    """name -> (call, bytes): the shipped decode step (triton_fused_tuned's arguments), KV 1024 / 8192."""
    from suite.techniques.decode_step import TUNED_ARGS, _bytes
    from suite.techniques.decode_step import reference as R
    from suite.techniques.decode_step import triton_step

    out = {}
    for kv in (1024, 8192):
        params = {"kv": kv}
        inputs = R.make_inputs(params, 0, "cuda")
        logits = R.empty_output(params, "cuda")
        call = lambda o=logits, i=inputs: triton_step.run(o, **i, **TUNED_ARGS)  # noqa: E731
        call()
        assert torch.isfinite(logits).all()
        out[f"decode_step_kv{kv}"] = (call, _bytes({**R.LLAMA_1B, **params}))
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--no-decode", action="store_true")
    args = ap.parse_args()
    t0 = time.time()
    calls = {**_norm_calls(), **_copy_calls(), **({} if args.no_decode else _decode_calls())}
    copy = copy_gbps("cuda")
    modes = {"zero": Protocol(cuda_version=3, flush_mode="zero"), "read": Protocol(cuda_version=4, flush_mode="read")}
    rows = []
    for rnd in range(args.rounds):
        for name, (call, nbytes) in calls.items():
            for mode in (("zero", "read") if rnd % 2 == 0 else ("read", "zero")):
                samples, st = measure(call, "cuda", modes[mode])
                s = sorted(samples)
                q = {f"p{p}": s[min(len(s) - 1, len(s) * p // 100)] for p in (10, 50, 90)}
                row = {"call": name, "mode": mode, "round": rnd, "protocol": st["protocol"], "n": len(s),
                       "median_ms": st["median"], **q, "bytes": nbytes}
                if nbytes:
                    row["share_of_copy"] = nbytes / (st["median"] / 1e3) / 1e9 / copy
                rows.append(row)
                print(json.dumps(row), flush=True)
    with open(args.out, "w") as f:
        json.dump({"copy_gbps": copy, "device": torch.cuda.get_device_name(), "torch": torch.__version__,
                   "wall_s": time.time() - t0, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
