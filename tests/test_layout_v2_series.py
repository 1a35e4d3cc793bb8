"""The H200 nightly tier re-run after the layout change (results/h200/layout_v2) continues every
series of the runs before it: same technique, implementation, case and metric names."""
from __future__ import annotations

from pathlib import Path

from db.validate import load_and_validate

H200 = Path(__file__).resolve().parent.parent / "results" / "h200"
BEFORE = [H200 / "protocol_v3" / "v3_attn_sparse_needle.json.gz", H200 / "protocol_v3" / "v3_gemm_fp32_emulation.json.gz",
          H200 / "repeats_v3_full" / "rep_19.json.gz"]


def _series(paths) -> dict[tuple, str]:
    """(technique, impl, case, metric) -> protocol, over every non-skipped row."""
    out = {}
    for p in paths:
        for r in load_and_validate(p)["results"]:
            if r["status"] != "skipped":
                out[(r["technique"], r["impl"], r["case"], r["metric"])] = (r["stats"] or {}).get("protocol") or ""
    return out


def test_every_series_before_the_move_continues():
    after = _series(sorted((H200 / "layout_v2").glob("nightly_*.json.gz")))
    before = _series(BEFORE)
    assert len(before) > 8000 and not set(before) - set(after)
    # Protocols match, except small calls now timed on 8 operand placements (a rule older than the move).
    changed = {k: (before[k], after[k]) for k in before if before[k] != after[k]}
    assert all(new == old.replace("/v3", "+place8/v3") for old, new in changed.values()), changed
    assert {k[0] for k in changed} <= {"needle_retrieval", "gemm_fp64_ozaki"}


def test_impl_hash_is_one_per_implementation_and_re_keyed():
    hashes: dict[tuple, set] = {}
    for p in sorted((H200 / "layout_v2").glob("nightly_*.json.gz")):
        for r in load_and_validate(p)["results"]:
            hashes.setdefault((r["technique"], r["impl"]), set()).add(r["impl_hash"])
    assert all(len(h) == 1 for h in hashes.values())
    old = {(r["technique"], r["impl"]): r["impl_hash"] for r in load_and_validate(BEFORE[1])["results"]}
    # Every FP32-emulation kernel moved files, so its import-closure hash differs from the folder-glob one.
    assert all(next(iter(hashes[k])) != h for k, h in old.items() if k in hashes)
