"""Train the tiny MQAR model and save its checkpoint (fp16 weights + config, well under 2 MB).

    python -m runners.studies.mqar_train --out suite/techniques/mqar/checkpoint/mqar_tiny.pt --seconds 75

Plain attention learns the task only after a short curriculum (the default --stages: 32 tokens / 4
pairs, then 128 / 8, then the main lengths); with --stages "" it stays near 1/8 (a guess among the
pairs' values) for as long as we trained. --key-shift 1 learns without the curriculum.
"""
from __future__ import annotations

import argparse
import math
import time

import torch

from suite.techniques.mqar.data import VOCAB, batch
from suite.techniques.mqar.model import TinyLM


def main(argv=None) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--seconds", type=float, default=90.0)
    ap.add_argument("--steps", type=int, default=100_000)
    ap.add_argument("--lengths", default="256,512,1024")
    ap.add_argument("--n-kv", type=int, default=8)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--dim", type=int, default=128)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--key-shift", type=int, default=0,
                    help="1: keys also see the previous token (one-hop recall); 0: plain attention")
    ap.add_argument("--stages", default="32x4:0.15,128x8:0.1",
                    help="curriculum before the main lengths: LENxPAIRS:FRACTION,... each for that share "
                         "of the time budget, e.g. 64x4:0.1,128x8:0.1")
    ap.add_argument("--resume", default=None, help="checkpoint to continue training from")
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    args = ap.parse_args(argv)
    torch.manual_seed(0)
    g = torch.Generator(device=args.device).manual_seed(0)
    lengths = [int(x) for x in args.lengths.split(",")]
    model = TinyLM(VOCAB, dim=args.dim, key_shift=bool(args.key_shift)).to(args.device)
    start = 0
    if args.resume:  # continue from a saved checkpoint, its own config (fresh optimiser state)
        ck = torch.load(args.resume, map_location="cpu")
        model = TinyLM(**ck["config"]).to(args.device)
        model.load_state_dict({k: v.float() for k, v in ck["state"].items()})
        start = ck["steps"]
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.05)
    stages = [(int(a), int(b), float(f)) for a, b, f in
              (st.replace("x", ":").split(":") for st in args.stages.split(",") if st)]
    t0, step = time.time(), start
    while step < args.steps and time.time() - t0 < args.seconds:
        # Linear warm-up over 200 steps, then cosine decay over the time budget (to 5% of the peak).
        frac = min(1.0, (time.time() - t0) / args.seconds)
        for group in opt.param_groups:
            group["lr"] = args.lr * min(1.0, (step - start + 1) / 200) * (0.05 + 0.95 * 0.5 * (1 + math.cos(math.pi * frac)))
        length, n_kv = stage_at(frac, stages) or (lengths[step % len(lengths)], args.n_kv)
        x, y, q = batch(args.batch, length, n_kv, g, args.device)
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=args.device.startswith("cuda")):
            logits = model(x).float()
        loss = torch.nn.functional.cross_entropy(logits.flatten(0, 1), y.flatten(), ignore_index=-100)
        # Up-weight the rare query positions so recall is learned, not only the filler rule.
        ql = torch.nn.functional.cross_entropy(logits[q], y[q])
        opt.zero_grad(set_to_none=True)
        (loss + ql).backward()
        opt.step()
        step += 1
        if step % 100 == 0:
            acc = (logits[q].argmax(-1) == y[q]).float().mean().item()
            print(f"step {step} {time.time() - t0:.0f}s len {length} pairs {n_kv} loss {loss.item():.3f} query_acc {acc:.3f}",
                  flush=True)
        if step % 500 == 0:
            save(model, step, lengths, args)
    save(model, step, lengths, args)
    print(f"saved {args.out} after {step} steps, {time.time() - t0:.0f}s")


def stage_at(frac: float, stages: list[tuple[int, int, float]]) -> tuple[int, int] | None:
    """(length, pairs) of the curriculum stage at this share of the time budget, None after the last."""
    end = 0.0
    for length, n_kv, share in stages:
        end += share
        if frac < end:
            return length, n_kv
    return None


def save(model, step: int, lengths: list[int], args) -> None:
    """fp16 weights + config + how it was trained."""
    state = {k: v.half().cpu() for k, v in model.state_dict().items()}
    torch.save({"config": model.config, "state": state, "steps": step,
                "train": {"lengths": lengths, "n_kv": args.n_kv, "batch": args.batch,
                                             "stages": args.stages}}, args.out)


if __name__ == "__main__":
    main()
