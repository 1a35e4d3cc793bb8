"""MQAR recall with dense attention and with each selector, as context grows, beside the loss on
the non-query (filler) tokens; writes a result file (technique "mqar").

    python -m runners.studies.mqar_evaluate --ckpt suite/techniques/mqar/checkpoint/mqar_tiny.pt \
        --control suite/techniques/mqar/checkpoint/mqar_no_curriculum.pt --contexts 256,512,1024,2048,4096 --out mqar.json
"""
from __future__ import annotations

import argparse

import torch

from runners.code_hash import module_hash
from runners.env import fingerprint, git_state
from runners.pool import ROOT
from runners.resultfile import ResultFile, new_run, result_row
from suite.lib.selectors import SELECTORS, TRITON_SELECTORS, select
from suite.techniques.mqar.data import batch
from suite.techniques.mqar.model import TinyLM


def load(path: str, device: str) -> TinyLM:
    """The committed checkpoint as a TinyLM in fp32 on `device`."""
    return from_checkpoint(torch.load(path, map_location="cpu"), device)


def from_checkpoint(ck: dict, device: str) -> TinyLM:
    """A loaded checkpoint dict (config, fp16 state) as a TinyLM in fp32 on `device`."""
    model = TinyLM(**ck["config"])
    model.load_state_dict({k: v.float() for k, v in ck["state"].items()})
    return model.to(device).eval()


@torch.no_grad()
def score(model, selector: str | None, ctx: int, n_kv: int, n: int, block: int, density: float,
          seed: int, device: str, chunk: int = 32) -> dict:
    """recall (query tokens whose value is the argmax) and nonquery_loss_nats (mean CE on filler),
    over n sequences drawn with `seed`, scored `chunk` sequences at a time (the token mask is S^2)."""
    g = torch.Generator(device=device).manual_seed(seed)
    x, y, q = batch(n, ctx, n_kv, g, device)
    sparse = None if selector is None else (lambda qq, kk, b, d: select(selector, qq, kk, b, d),
                                            block, density)
    hits, queries, ce, filler_n = 0.0, 0, 0.0, 0
    for a in range(0, n, chunk):
        xs, ys, qs = x[a:a + chunk], y[a:a + chunk], q[a:a + chunk]
        logits = model(xs, sparse).float()
        hits += (logits[qs].argmax(-1) == ys[qs]).sum().item()
        queries += int(qs.sum())
        filler = (ys != -100) & ~qs
        ce += torch.nn.functional.cross_entropy(logits[filler], ys[filler], reduction="sum").item()
        filler_n += int(filler.sum())
    return {"recall": hits / queries, "nonquery_loss_nats": ce / filler_n}


def counts(metric: str, value: float, queries: int) -> dict:
    """k of n for recall (n_kv queries per sequence), nothing for the loss."""
    return {"k": round(value * queries), "n": queries} if metric == "recall" else {}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--ckpt", required=True)
    ap.add_argument("--control", default=None,
                    help="a second checkpoint scored densely only (impl dense_control), e.g. plain attention")
    ap.add_argument("--out", required=True)
    ap.add_argument("--contexts", default="128,256,512,1024")
    ap.add_argument("--n", type=int, default=256)
    ap.add_argument("--block", type=int, default=16)
    ap.add_argument("--densities", default="0.1,0.25")
    ap.add_argument("--chunk", type=int, default=32)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    args = ap.parse_args(argv)
    densities = [float(d) for d in args.densities.split(",")]
    contexts = [int(c) for c in args.contexts.split(",")]
    rf = ResultFile(args.out, new_run("nightly", "manual", git_state(str(ROOT)),
                                      fingerprint(args.device), vars(args)))
    # The Triton selectors repeat a torch selector's blocks (tests/test_msa_fused.py): no new column.
    sels = [sel for sel in SELECTORS if sel not in TRITON_SELECTORS]
    runs = [(None, 1.0)] + [(sel, d) for d in densities for sel in sels]
    evaluate(rf, torch.load(args.ckpt, map_location="cpu"), contexts, runs, "", args)
    if args.control:
        evaluate(rf, torch.load(args.control, map_location="cpu"), contexts, [(None, 1.0)], "_control", args)
    rf.finish()


def evaluate(rf: ResultFile, ck: dict, contexts: list[int], runs: list, suffix: str, args) -> None:
    """Rows of recall and filler loss for one checkpoint: every (selector, density) of `runs` at
    every context; `suffix` on the impl names tells a second model apart within the run."""
    model = from_checkpoint(ck, args.device)
    n_kv, ihash = ck["train"]["n_kv"], module_hash(__name__)
    for ctx in contexts:
        for sel, density in runs:
            m = score(model, sel, ctx, n_kv, args.n, args.block, density, 0, args.device, args.chunk)
            params = {"ctx": ctx, "n_kv": n_kv, "block": args.block, "density": density,
                      "local_window": args.block if sel else None,
                      "trained_lengths": ck["train"]["lengths"], "trained_length": ctx in ck["train"]["lengths"],
                      "train_steps": ck["steps"], "key_shift": bool(ck["config"].get("key_shift", False))}
            case = f"ctx{ctx}" if sel is None else f"ctx{ctx}_d{round(density * 100)}"
            rows = [result_row("mqar", (sel or "dense") + suffix, case, k, "1" if k == "recall" else "nats",
                               "higher" if k == "recall" else "lower", value=v, params=params,
                               stats={"sequences": args.n, **counts(k, v, args.n * n_kv)}, impl_version=1,
                               impl_hash=ihash)
                    for k, v in m.items()]
            rf.add(rows)
            print(f"ctx {ctx} {(sel or 'dense') + suffix:13s} density {density:.2f} recall {m['recall']:.3f} "
                  f"nonquery_loss {m['nonquery_loss_nats']:.3f}", flush=True)


if __name__ == "__main__":
    main()
