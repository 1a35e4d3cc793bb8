"""`kwatch hardware`: every series of one commit on GPU A beside GPU B (db/hardware.py); exit 1 when a
quality metric (recall, needle hits, fractions, errors, statuses) differs between the GPUs."""
from __future__ import annotations

import json
import math
from typing import Optional

import typer
from rich.console import Console
from rich.table import Table

from db.engine import open_db
from db.hardware import HardwareComparison, load


def _f(x, fmt: str = ".4g") -> str:
    return "-" if x is None or (isinstance(x, float) and not math.isfinite(x)) else format(x, fmt)


def _share(x) -> str:
    return "-" if x is None else f"{x:.0%}" + (" (>100%)" if x > 1 else "")


def _doc(c: HardwareComparison) -> dict:
    return {"gpu_a": c.gpu_a, "gpu_b": c.gpu_b, "run_a": c.run_a, "run_b": c.run_b, "commit_a": c.commit_a,
            "commit_b": c.commit_b, "caption": c.caption,
            "ceilings": {k: {"a": a, "b": b, "ratio": r} for k, (a, b, r) in c.ceilings.items()},
            "alerts": len(c.alerts), "against_prediction": len(c.flagged), "speed": c.speed, "quality": c.quality}


def _print(c: HardwareComparison, limit: int, out: Console) -> None:
    out.print(f"A: {c.gpu_a} (run {c.run_a[:12]}, {c.commit_a[:7]})   B: {c.gpu_b} (run {c.run_b[:12]}, "
              f"{c.commit_b[:7]})", markup=False, highlight=False)
    out.print(c.caption, markup=False, highlight=False)
    out.print("ceilings B/A: " + ", ".join(f"{k} {r:.3f}" for k, (_, _, r) in c.ceilings.items()),
              markup=False, highlight=False)
    q = Table(title=f"quality: {len(c.alerts)} alert(s) of {len(c.quality)} series (verdict count test)")
    for col in ("technique", "impl", "case", "metric", "A", "B", "why"):
        q.add_column(col, overflow="fold")
    for r in (c.alerts or c.quality)[:limit]:
        ka = f"{r['k_a']}/{r['n_a']}" if r["k_a"] is not None else _f(r["a"])
        kb = f"{r['k_b']}/{r['n_b']}" if r["k_b"] is not None else _f(r["b"])
        q.add_row(r["technique"], r["impl"], r["case"], r["metric"], ka, kb,
                  ("ALERT " if r["alert"] else "") + r["why"][:160])
    out.print(q)
    t = Table(title=f"speed: B over A, {len(c.flagged)} of {len(c.speed)} series against the ceilings' "
                    "prediction beyond their noise (listed first)")
    for col in ("technique", "impl", "case", "metric", "A", "B", "share A", "share B", "B/A speed (95% CI)",
                "predicted", "vs predicted", "flag"):
        t.add_column(col, overflow="fold")
    for s in c.speed[:limit]:
        t.add_row(s["technique"], s["impl"], s["case"], s["metric"], _f(s["a"]), _f(s["b"]), _share(s["share_a"]),
                  _share(s["share_b"]), f"{_f(s['speed'], '.3f')} ({_f(s['speed_lo'], '.3f')}-{_f(s['speed_hi'], '.3f')})",
                  f"{_f(s['predicted'], '.3f')} {s['bound_by'] or ''}", _f(s["vs_predicted"], ".3f"), s["note"])
    out.print(t)


def hardware_cmd(gpu_a: Optional[str] = typer.Option(None, "--gpu-a", help="part of GPU A's name (e.g. h100)"),
                 gpu_b: Optional[str] = typer.Option(None, "--gpu-b", help="part of GPU B's name (e.g. h200)"),
                 commit: Optional[str] = typer.Option(None, "--commit", help="a commit both GPUs ran (default: the "
                                                      "newest they share, else each GPU's newest run)"),
                 tier: str = typer.Option("nightly", "--tier"),
                 fmt: str = typer.Option("table", "--format", help="table or json"),
                 limit: int = typer.Option(40, "--limit", help="rows per table"),
                 db: Optional[str] = typer.Option(None, "--db", help="database URL (default: $KWATCH_DB or "
                                                  "sqlite:///kwatch.db)")) -> None:
    """GPU A beside GPU B for one commit: absolute, share of each GPU's ceiling, speed against what the
    ceilings predict (datasheet peaks where known); quality compared with the count test. Exit 1 on a quality alert."""
    if fmt not in ("table", "json"):
        raise typer.BadParameter("--format is table or json")
    try:
        with open_db(db)() as s:
            c = load(s, gpu_a, gpu_b, commit, tier)
    except LookupError as exc:
        Console(stderr=True).print(f"error: {exc}", markup=False, highlight=False, soft_wrap=True)
        raise typer.Exit(2)
    if fmt == "json":
        print(json.dumps(_doc(c), default=str))
    else:
        _print(c, limit, Console(width=220))
    raise typer.Exit(1 if c.alerts else 0)
