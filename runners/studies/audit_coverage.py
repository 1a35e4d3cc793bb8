"""What the measuring boundary's fresh-value audit did in one run, and whether the run's honest medians moved.

    python -m runners.studies.audit_coverage RUN.json.gz [--baseline OTHER.json.gz ...] [--out OUT.json]

Per technique: latency series audited, skipped (with the reasons) and refused by the boundary; with
baselines, the median over shared ok latency series of candidate / baseline, and of each baseline against
the first (the same-code scatter to read it against). Writes a small JSON digest (the data policy keeps
whole nightlies out of the tree).
"""
from __future__ import annotations

import argparse
import collections
import json
import statistics

from runners.resultfile import load


def _latency(doc: dict) -> dict[tuple, float]:
    return {(r["technique"], r["impl"], r["case"]): r["value"] for r in doc["results"]
            if r["metric"] == "latency_ms" and r["status"] == "ok" and r["value"]}


def coverage(doc: dict) -> dict:
    """{technique: {"audited", "skipped": {reason: n}, "refused"}} over the run's latency rows."""
    out: dict = collections.defaultdict(lambda: {"audited": 0, "skipped": collections.Counter(), "refused": 0})
    for r in doc["results"]:
        if r["metric"] != "latency_ms":
            continue
        t = out[r["technique"]]
        audit = (r.get("stats") or {}).get("audit")
        if "refused by the measuring boundary" in (r.get("error") or ""):
            t["refused"] += 1
        elif audit == "passed":
            t["audited"] += 1
        elif audit:
            t["skipped"][audit.removeprefix("skipped: ")] += 1
    return {k: {**v, "skipped": dict(v["skipped"])} for k, v in sorted(out.items())}


def median_ratio(a: dict, b: dict) -> dict:
    """Median and spread of a / b over the latency series both hold."""
    shared = sorted(set(a) & set(b))
    ratios = sorted(a[k] / b[k] for k in shared)
    if not ratios:
        return {"series": 0}
    q = lambda p: ratios[min(len(ratios) - 1, int(p * len(ratios)))]  # noqa: E731
    return {"series": len(ratios), "median": round(statistics.median(ratios), 4),
            "p10": round(q(0.1), 4), "p90": round(q(0.9), 4)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run")
    ap.add_argument("--baseline", nargs="*", default=[])
    ap.add_argument("--out")
    args = ap.parse_args(argv)
    doc = load(args.run)
    run = doc["run"]
    statuses = collections.Counter(r["status"] for r in doc["results"])
    cov = coverage(doc)
    digest = {"file": args.run.rsplit("/", 1)[-1], "commit": (run.get("git") or {}).get("commit"),
              "gpu": (run.get("env") or {}).get("gpu_name"), "started_at": run.get("started_at"),
              "finished_at": run.get("finished_at"), "statuses": dict(statuses),
              "audited": sum(t["audited"] for t in cov.values()),
              "skipped": sum(sum(t["skipped"].values()) for t in cov.values()),
              "refused": sum(t["refused"] for t in cov.values()), "techniques": cov}
    if args.baseline:
        base = [load(p) for p in args.baseline]
        lat0, cand = _latency(base[0]), _latency(doc)
        digest["against"] = {p.rsplit("/", 1)[-1]: median_ratio(cand, _latency(b)) for p, b in zip(args.baseline, base)}
        digest["same_code"] = {p.rsplit("/", 1)[-1]: median_ratio(_latency(b), lat0)
                               for p, b in zip(args.baseline[1:], base[1:])}
    text = json.dumps(digest, indent=1)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")
    print(f"{digest['file']}: {digest['audited']} latency series audited, {digest['skipped']} skipped, "
          f"{digest['refused']} refused")
    for name, t in cov.items():
        print(f"  {name:24s} audited {t['audited']:4d}  skipped {sum(t['skipped'].values()):3d}  refused {t['refused']}")
    for k, v in digest.get("against", {}).items():
        print(f"  candidate / {k}: {v}")
    for k, v in digest.get("same_code", {}).items():
        print(f"  same code, {k} / first baseline: {v}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
