"""Tile sweep of the fused step on a GPU: each configuration (launch mode, GEMV chunk, programs per
kernel, warps) replayed as a CUDA graph with the L2 flushed before every replay (runners/timing.py's
protocol, runners/studies/timed.py), checked against the bf16 eager step first; ms per token and share
of the copy bandwidth measured in the same process.

Then where the time goes, for the first and fourth configurations: each kind of launch (qkv,
attention, o_proj, gate_up, down, head) replayed alone, all of its launches and one of them, with the
bytes it streams; the floor of a chain of as many empty launches as the step has; and the first
configurations again at each --more-kv.

KWATCH_GIT_COMMIT=<commit> python -m runners.studies.decode_step_sweep --kv 1024 --out sweep.json [--budget-s 60]
    [--more-kv 8192]   (the commit is recorded in the file, as the runner's studies do)
A dry run on the CPU (interpreter, host timings, no graphs): --device cpu --params '{...tiny...}' --configs 0 4"""
from __future__ import annotations

import argparse
import json
import os
import time

from runners.studies.timed import timed
from suite.techniques.decode_step.sweep_sets import CONFIGS, MORE, SETS

DEV = {"device": "cuda", "params": {}, "protocol": None}  # set by main(): a CPU dry run uses "cpu" and tiny params

def step_fn(cfg: dict):
    """The step function and its keyword options for a configuration (persistent or per-launch)."""
    from suite.techniques.decode_step import triton_dataflow, triton_persistent, triton_step

    if cfg.get("persistent"):
        return triton_persistent.run, {k: v for k, v in cfg.items() if k != "persistent"}
    if cfg.get("dataflow"):
        return triton_dataflow.run, {k: v for k, v in cfg.items() if k != "dataflow"}
    return triton_step.run, cfg


def with_wd_t(opts: dict, inputs: dict) -> dict:
    """opts with wd_t=True replaced by the down weights transposed, (L, I, H), made once per inputs."""
    if opts.get("wd_t") is not True:
        return opts
    if "_wd_t" not in inputs:
        inputs["_wd_t"] = inputs["wd"].transpose(1, 2).contiguous()
    return {**opts, "wd_t": inputs["_wd_t"]}


def _warm(job: tuple) -> str:
    """Run one configuration once in a fresh process (fills the shared Triton cache); its error or ''."""
    cfg, kv = job
    try:
        from suite.techniques.decode_step.reference import empty_output, make_inputs

        fn, opts = step_fn(cfg)
        inputs = make_inputs({"kv": kv}, 0, "cuda")
        fn(empty_output({"kv": kv}, "cuda"), **inputs, **with_wd_t(opts, inputs))  # GPU only
        return ""
    except Exception as exc:  # reported by the sweep proper
        return f"{type(exc).__name__}: {exc}"[:200]


def warm(jobs: list, workers: int, timeout_s: float) -> None:
    """Compile the kernels of every (configuration, kv) in parallel processes before timing (compiles
    dominate the sweep's time); after timeout_s the rest compile when first timed."""
    import multiprocessing as mp

    with mp.get_context("spawn").Pool(workers) as pool:
        res = pool.map_async(_warm, jobs, chunksize=1)
        try:
            errs = res.get(timeout=timeout_s)
        except mp.TimeoutError:
            print(json.dumps({"warm": "timed out", "after_s": timeout_s}), flush=True)
            return
        for (cfg, kv), err in zip(jobs, errs):
            if err:
                print(json.dumps({"warm": cfg, "kv": kv, "error": err}), flush=True)


def time_graph(fn) -> list[float]:
    """ms per replay of fn captured as a CUDA graph, the L2 flushed before each (runners/timing.py's protocol);
    a dry run: host timings of plain calls. The protocol's name goes into the file."""
    samples, stats = timed(fn, DEV["device"], graph=DEV["device"] == "cuda")
    DEV["protocol"] = stats["protocol"]
    return samples


def launch_floor(n: int, programs: int = 528) -> float:
    """Median ms of a CUDA graph of n empty launches of `programs` programs each, one after another."""
    import triton

    @triton.jit
    def _empty(x):
        pass

    import torch

    x = torch.empty(1, device=DEV["device"])
    ms = sorted(time_graph(lambda: [_empty[(programs,)](x) for _ in range(n)]))
    return ms[len(ms) // 2]


def kind_bytes(kind: str, inp: dict) -> float:
    """Bytes the launches of one kind stream (weights, or the K/V caches for attention)."""
    ws = {"qkv": ("wqkv",), "o_proj": ("wo",), "gate_up": ("wgu",), "down": ("wd",), "head": ("emb",),
          "mlp": ("wgu", "wd"), "attention": ("k_cache", "v_cache"), "embed": ()}[kind]
    return float(sum(inp[w].numel() * inp[w].element_size() for w in ws))


def breakdown(out, inputs: dict, cfg: dict, ceiling: float) -> list[dict]:
    """Each launch kind of the fused step replayed alone: all its launches, then its first only."""
    from suite.techniques.decode_step.triton_step import steps

    calls = steps(out, **{k: v for k, v in inputs.items() if not k.startswith("_")}, **with_wd_t(cfg, inputs))
    rows = []
    for kind in dict.fromkeys(k for k, _ in calls):
        mine = [c for k, c in calls if k == kind]
        for n in (len(mine), 1):
            ms = sorted(time_graph(lambda: [c() for c in mine[:n]]))
            med = ms[len(ms) // 2]
            gb = kind_bytes(kind, inputs) * n / len(mine) / 1e9
            rows.append({"config": cfg, "kind": kind, "launches": n, "median_ms": med,
                         "gbps": gb / med * 1e3 if gb else None,
                         "ceiling_share": gb / med * 1e3 / ceiling if gb else None})
            print(json.dumps(rows[-1]), flush=True)
    return rows


def _persistent_facts(cfg: dict, inputs: dict) -> dict:
    """Registers, resident programs and whether a barrier gave up, for a persistent configuration;
    for a dataflow one: programs and whether a wait gave up."""
    if cfg.get("dataflow"):
        from suite.techniques.decode_step.triton_dataflow import plan as df_plan

        p = df_plan(inputs["emb"], inputs["wqkv"], inputs["wo"], inputs["wgu"], inputs["k_cache"],
                    **{k: v for k, v in cfg.items() if k != "dataflow"})
        return {"programs": p.grid, "wait_gave_up": p.gave_up()}
    if not cfg.get("persistent"):
        return {}
    from suite.techniques.decode_step.triton_persistent import plan

    p = plan(inputs["emb"], inputs["wqkv"], inputs["wo"], inputs["wgu"], inputs["k_cache"],
             **{k: v for k, v in cfg.items() if k != "persistent"})
    return {"fit": p.fit, "programs": p.nprog, "barrier_gave_up": int(p.bar[1].item())}


def sweep(params: dict, configs, t0: float, budget_s: float, ceiling: float) -> tuple[list, dict]:
    """Rows (one per configuration: rel. diff vs the bf16 eager step, median ms, share of copy) and inputs."""
    import torch

    from suite.techniques.decode_step import _bytes
    from suite.techniques.decode_step.reference import empty_output, make_inputs
    from suite.techniques.decode_step.torch_eager import run as eager

    params = {**DEV["params"], **params}
    inputs = make_inputs(params, 0, DEV["device"])
    inputs_t = dict(inputs)  # + "_wd_t", kept out of the steps' inputs
    want = empty_output(params, DEV["device"])
    eager(want, **{**inputs, "k_cache": inputs["k_cache"].clone(), "v_cache": inputs["v_cache"].clone()})
    gb = _bytes(params) / 1e9
    rows = []
    for cfg in configs:
        if time.perf_counter() - t0 > budget_s:
            rows.append({"kv": params["kv"], "config": cfg, "skipped": "budget"})
            continue
        out = torch.full_like(want, float("nan"))
        fused, opts = step_fn(cfg)
        opts = with_wd_t(opts, inputs_t)
        try:
            fused(out, **inputs, **opts)
            err = float((out - want).norm() / want.norm())
            ms = sorted(time_graph(lambda: fused(out, **inputs, **opts)))
            med = ms[len(ms) // 2]
            rows.append({"kv": params["kv"], "config": cfg, "rel_diff_vs_eager_bf16": err, "median_ms": med,
                         "min_ms": ms[0], "gbps": gb / med * 1e3, "ceiling_share": gb / med * 1e3 / ceiling,
                         **_persistent_facts(cfg, inputs)})
        except Exception as exc:  # a configuration that fails to compile or launch is a result too
            rows.append({"kv": params["kv"], "config": cfg, "error": f"{type(exc).__name__}: {exc}"[:500]})
        print(json.dumps(rows[-1]), flush=True)
    return rows, inputs_t


def main() -> None:
    import torch

    from suite.lib.bandwidth import copy_gbps
    from suite.techniques.decode_step.reference import empty_output

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kv", type=int, default=1024)
    ap.add_argument("--more-kv", type=int, nargs="*", default=[])
    ap.add_argument("--out", required=True)
    ap.add_argument("--budget-s", type=float, default=60.0)
    ap.add_argument("--warm", type=int, default=0, help="processes compiling the configurations first")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--params", default="{}", help="JSON: params over Llama-3.2-1B's (a dry run's tiny shape)")
    ap.add_argument("--configs", type=int, nargs="*", default=[], help="indices into CONFIGS (default: all)")
    for name in SETS:
        ap.add_argument(f"--{name.replace('_', '-')}", dest="set", action="store_const", const=name,
                        help=f"{name.upper()}'s configurations (see SETS) instead of CONFIGS")
    args = ap.parse_args()
    t0 = time.perf_counter()
    default = ([CONFIGS[i] for i in args.configs] if args.configs else CONFIGS, MORE, (CONFIGS[0], CONFIGS[3]))
    configs, more, broken_down = SETS[args.set] if args.set else default
    if args.warm:
        warm([(c, args.kv) for c in configs] + [(c, k) for k in args.more_kv for c in more], args.warm,
             args.budget_s / 2)
        print(json.dumps({"warmed_s": round(time.perf_counter() - t0, 1)}), flush=True)
    params = {"kv": args.kv}
    DEV.update(device=args.device, params=json.loads(args.params))
    ceiling = copy_gbps(args.device) if args.device == "cuda" else 1.0
    rows, inputs = sweep(params, configs, t0, args.budget_s, ceiling)
    parts = []
    try:
        n = 5 * 16 + 1
        parts.append({"kind": "empty_launch_chain", "launches": n, "median_ms": launch_floor(n)})
        print(json.dumps(parts[-1]), flush=True)
    except Exception as exc:
        parts.append({"kind": "empty_launch_chain", "error": f"{type(exc).__name__}: {exc}"[:500]})
    for cfg in broken_down:
        if time.perf_counter() - t0 > args.budget_s:
            break
        try:
            parts += breakdown(empty_output({**DEV["params"], **params}, args.device), inputs, cfg, ceiling)
        except Exception as exc:
            parts.append({"config": cfg, "error": f"{type(exc).__name__}: {exc}"[:500]})
    del inputs
    for kv in args.more_kv if more else ():
        rows += sweep({"kv": kv}, more, t0, args.budget_s, ceiling)[0]
    name = torch.cuda.get_device_name() if args.device == "cuda" else "cpu"
    doc = {"kv": args.kv, "breakdown": parts, "copy_gbps": ceiling, "device": name, "torch": torch.__version__,
           "commit": os.environ.get("KWATCH_GIT_COMMIT"), "set": args.set, "protocol": DEV["protocol"], "rows": rows,
           "wall_s": round(time.perf_counter() - t0, 1)}
    with open(args.out, "w") as f:
        json.dump(doc, f, indent=1)


if __name__ == "__main__":
    main()
