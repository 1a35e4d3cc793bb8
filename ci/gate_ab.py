"""`kwatch gate --ab BASE_REF HEAD_REF`: both revisions exported as clean trees and measured here,
interleaved case by case (runners.ab); the two result files then go through the gate's judge."""
from __future__ import annotations

import tempfile
from pathlib import Path

from runners.backfill import run_ab, spec_of
from runners.tree_cli import ab_files
from runners.tree_run import IMPORT_FAILED
from runners.trees import commit_info, export


class ABError(RuntimeError):
    """A side of the A/B could not be exported, imported or measured."""


def measure_ab(base_ref: str, head_ref: str, tier: str, techniques, impls, cases, rounds: int = 5,
               device: str = "auto", out_dir: Path = Path("kwatch-runs/ab")) -> tuple[Path, Path]:
    """Result files (base, head) of both revisions measured interleaved on this machine."""
    try:
        infos = [commit_info(base_ref), commit_info(head_ref)]
    except ValueError as exc:
        raise ABError(str(exc))
    outs = ab_files(out_dir, f"ab_{infos[0]['commit'][:10]}_{infos[1]['commit'][:10]}")
    spec = spec_of(tier, techniques, impls, cases, device, 600.0)
    with tempfile.TemporaryDirectory(prefix="kwatch-ab-") as tmp:
        base, head = export(infos, Path(tmp))
        proc = run_ab(base, head, spec, outs, rounds)
    if proc.returncode != 0:
        why = "could not be imported or planned" if proc.returncode == IMPORT_FAILED else "failed"
        raise ABError(f"A/B of {base_ref}..{head_ref} {why} (exit {proc.returncode}): {proc.stderr[-800:]}")
    return outs
