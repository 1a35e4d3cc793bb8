"""DHSA's needle claim beside our needle grid (page: "Depth — sparse attention fails at retrieval")."""
from collections import defaultdict

from suite.claims.spec import Band, Claim, Custom

SECTION = "Design — sparse attention: the three named schemes"
DHSA = ("DHSA — Xiong et al., Long-Context Modeling with Dynamic Hierarchical Sparse Attention for "
        "On-Device LLMs (NeurIPS 2025), abstract")
T = "needle_retrieval"


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


CLAIMS = (
    Claim("dhsa_matches_dense_needle",
          "DHSA matches dense attention in accuracy on Needle-in-a-Haystack, without retraining.",
          1, "fraction of exact top-k's needles", DHSA, "authors", "any", SECTION,
          Band(0.9, 1.0, "below", "'matches' -> 90% to all of the needles the exact top-k selection finds "
               "(the share cannot exceed 1); less is 'not reproduced': our DHSA-style selector has no "
               "learned boundary predictor"),
          Custom(T, "suite.techniques.needle_retrieval.claims:retrieval_kept", "retrieval"), technique=T,
          url="https://arxiv.org/abs/2510.24606",
          quantity="share of the needle grid cells retrieved with exact top-k blocks that our DHSA-style "
          "selector also retrieves"),
)
