"""Smoke tolerance calibration: how much of its tolerance each smoke check uses over many seeds.

`python -m runners.calibrate --seeds 40 --salt N [--only TEXT] [--part I/K]` runs, on this CPU
(Triton under TRITON_INTERPRET=1), the correctness check of every (technique, impl, smoke case) that
runs here, once per seed of draw N, and merges into runners/smoke_calibration.json the largest
err / bound (the "use": > 1 fails the run) and err / low-precision error; draws of the same code
add up (five draws of 40: 200 seeds). tests/test_smoke_tolerances.py keeps the committed file in
step with the code and re-measures the cheap checks itself. The runners imports wait inside the
functions until TRITON_INTERPRET is set."""
from __future__ import annotations

import argparse
import json
import os
import random
import time
from pathlib import Path

CALIBRATION = Path(__file__).resolve().parent / "smoke_calibration.json"
# The largest use a correct implementation may show over the calibration seeds: half its tolerance,
# so a seed outside the 200 sampled would have to err twice as badly as the worst one seen to fail.
MAX_USE = 0.5
SEED_RANGE = (1, 2**31 - 20_000)  # the runner's base seeds (runners.run.execute)


def smoke_checks(device: str = "cpu") -> list[tuple]:
    """(technique, impl, case) of the smoke tier whose check runs on `device`, expected failures
    excluded (their failing is the point)."""
    from runners.run import RunOptions, _capabilities, plan  # after TRITON_INTERPRET is set (module docstring)

    caps = _capabilities(device)
    return [(t, i, c) for t, i, c in plan(RunOptions(tier="smoke", device=device))
            if not i.expect_failure and all(r in caps for r in i.requires)]


def seeds_for(n: int, salt: int = 0) -> list[int]:
    """n base seeds drawn like the runner draws them, reproducibly (salt picks another draw)."""
    rng = random.Random(20261130 + salt)
    return [rng.randrange(*SEED_RANGE) for _ in range(n)]


def per_seed(tech, impl, case, seeds: list[int], device: str = "cpu") -> list[tuple[float, float, float]]:
    """(error, low-precision error, bound) of the correctness check at each seed (error inf where
    the output held NaN)."""
    from runners.correctness import ReferenceCache, check  # after TRITON_INTERPRET is set (module docstring)
    from suite.spec import implementation

    fn, cache, out = implementation(impl), ReferenceCache(), []
    for seed in seeds:
        v = check(tech, impl, case, fn, device, [seed], cache)
        out.append((v.errors[0] if v.errors else float("inf"), v.lowp_errors[0], v.tolerance))
    return out


def entry(key: str, ihash: str, tol, rows: list[tuple[float, float, float]], seconds: float, salt: int) -> dict:
    """A calibration entry: the largest use (error / bound) and the largest error / low-precision error
    (which bounds the use under any other k: use <= ratio / k), over the seeds of draw `salt`."""
    use = [e / b if b > 0 else float("inf") for e, _, b in rows]
    ratio = [e / lo if lo > 0 else (0.0 if e == 0 else float("inf")) for e, lo, _ in rows]
    return {"check": key, "impl_hash": ihash, "tolerance": {"k": tol.k, "floor": tol.floor},
            "seeds": len(rows), "draws": [[salt, len(rows)]], "max_use": max(use), "max_ratio": max(ratio),
            "s_per_seed": round(seconds / len(rows), 4)}


def combined(old: dict | None, new: dict) -> dict:
    """new, with the seeds of old's other draws added when both measured the same code and bound."""
    same = old and old["impl_hash"] == new["impl_hash"] and old["tolerance"] == new["tolerance"]
    if not same:
        return new
    draws = dict(map(tuple, old["draws"])) | dict(map(tuple, new["draws"]))
    if len(draws) == len(old["draws"]) and dict(map(tuple, old["draws"])) == draws:
        return new  # the same draws again: the newer measurement stands
    return {**new, "draws": sorted(map(list, draws.items())), "seeds": sum(draws.values()),
            "max_use": max(old["max_use"], new["max_use"]), "max_ratio": max(old["max_ratio"], new["max_ratio"])}


def calibrate(n_seeds: int, out: Path, device: str = "cpu", only: str | None = None,
              part: tuple[int, int] = (0, 1), salt: int = 0) -> None:
    """Calibrate each smoke check (every part[1]-th from part[0], for parallel runs), merging each
    entry into `out` as soon as it is measured."""
    from runners.job import impl_hash  # after TRITON_INTERPRET is set (module docstring)

    seeds = seeds_for(n_seeds, salt)
    for n, (tech, impl, case) in enumerate(smoke_checks(device)):
        key = f"{tech.name}/{impl.name}/{case.id}"
        if (only and only not in key) or n % part[1] != part[0]:
            continue
        t0 = time.perf_counter()
        rows = per_seed(tech, impl, case, seeds, device)
        e = entry(key, impl_hash(tech, impl), tech.tolerances[impl.accuracy], rows, time.perf_counter() - t0, salt)
        merge(out, [e])
        print(f"{key}: max use {e['max_use']:.3f} ({e['s_per_seed']} s/seed)", flush=True)


def rekeyed(entry: dict) -> dict:
    """An entry calibrated before impl_hash covered the args, on the code that runs now (its hash is
    that code's import-closure hash), with today's hash; any other entry as it is."""
    from runners.code_hash import closure_hash, impl_hash  # after TRITON_INTERPRET is set (module docstring)
    from suite.registry import get

    tname, iname, _ = entry["check"].split("/", 2)
    try:
        tech = get(tname)
        impl = tech.impl(iname)
    except KeyError:
        return entry
    if impl.args and entry["impl_hash"] == closure_hash(impl.target.partition(":")[0]):
        return {**entry, "impl_hash": impl_hash(tech, impl)}
    return entry


def merge(path: Path, entries: list[dict]) -> None:
    """Write entries into the calibration file at path, replacing those of the same checks (entries
    calibrated before impl_hash covered the args re-keyed on the way)."""
    old = [rekeyed(e) for e in json.loads(path.read_text())["entries"]] if path.exists() else []
    merged = {e["check"]: e for e in old}
    for e in entries:
        merged[e["check"]] = combined(merged.get(e["check"]), e)
    doc = {"device": "cpu (TRITON_INTERPRET=1)", "seed_draw": "runners.calibrate.seeds_for",
           "max_use_allowed": MAX_USE, "entries": sorted(merged.values(), key=lambda e: e["check"])}
    path.write_text(json.dumps(doc, indent=1) + "\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=200)
    ap.add_argument("--out", default=str(CALIBRATION))
    ap.add_argument("--only", help="substring of technique/impl/case")
    ap.add_argument("--part", default="0/1", help="I/N: every N-th check from the I-th")
    ap.add_argument("--salt", type=int, default=0, help="which draw of seeds (draws add up per check)")
    ap.add_argument("--rekey", action="store_true", help="only re-key entries calibrated before impl_hash "
                    "covered the args (on the code that runs now) and exit")
    args = ap.parse_args()
    os.environ.setdefault("TRITON_INTERPRET", "1")
    if args.rekey:
        merge(Path(args.out), [])
        return
    i, n = map(int, args.part.split("/"))
    calibrate(args.seeds, Path(args.out), only=args.only, part=(i, n), salt=args.salt)
    entries = json.loads(Path(args.out).read_text())["entries"]
    bad = [e["check"] for e in entries if e["max_use"] > MAX_USE]
    print(f"{args.out}: {len(entries)} entries; {len(bad)} over {MAX_USE}: {bad}")


if __name__ == "__main__":
    main()
