"""Needle-grid shares for claims: how many of exact top-k's retrieved needles a selector keeps."""
from collections import defaultdict


def retrieval_kept(rows: list[dict], impl: str = "triton_dhsa_chunks", base: str = "triton_exact_topk"):
    """Share of the needle cells the exact top-k selection retrieves that `impl` retrieves too."""
    got = defaultdict(dict)
    for r in rows:
        if r["metric"] == "retrieval" and r["impl"] in (impl, base):
            got[(r["params"].get("ctx"), r["case"])][r["impl"]] = r["value"]
    cells = [(k, v) for k, v in got.items() if v.get(base) == 1.0 and impl in v]
    if not cells:
        return None
    per_ctx = defaultdict(list)
    for (ctx, _), v in cells:
        per_ctx[ctx].append(v[impl] == 1.0)
    share = sum(v[impl] == 1.0 for _, v in cells) / len(cells)
    parts = ", ".join(f"{ctx // 1024}K {sum(x) / len(x):.0%}" for ctx, x in sorted(per_ctx.items()))
    return share, f"{impl} retrieves {share:.1%} of the {len(cells)} cells {base} retrieves ({parts})"
