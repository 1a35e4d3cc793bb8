"""Approximate top-k held to a bar: a selector + kernel >= 5x over dense that keeps the needles."""
from suite.claims.needles import retrieval_kept
from suite.claims.spec import PAGE, Claim, Custom, at_least

SECTION = "Design — sparse attention: the primitive, top-k approximation"
T = "sparse_prefill"
KEEP = 0.95  # share of exact top-k's retrieved needle cells a selector must keep to count


def fast_selector_keeping_needles(rows: list[dict], s: int = 65_536, density: float = 0.1):
    """cuDNN dense latency / (selector + our kernel) latency at context s, for the fastest pipeline
    whose selector retrieves >= KEEP of the needle cells exact top-k retrieves (None: none measured)."""
    dense = [r["value"] for r in rows if r["technique"] == "attention_dense" and r["impl"] == "sdpa_cudnn"
             and r["metric"] == "latency_ms" and r["params"].get("s") == s]
    pipes = {r["impl"]: r["value"] for r in rows if r["technique"] == T and r["metric"] == "latency_ms"
             and r["params"].get("s") == s and r["params"].get("density") == density}
    needles = [r for r in rows if r["technique"] == "needle_retrieval"]
    if not dense or not pipes:
        return None
    kept = {impl: retrieval_kept(needles, impl=impl) for impl in pipes}  # same impl names there
    ok = {impl: ms for impl, ms in pipes.items() if kept[impl] and kept[impl][0] >= KEEP}
    parts = "; ".join(f"{impl} {ms:.3f} ms ({min(dense) / ms:.2f}x), needles kept "
                      + (f"{kept[impl][0]:.1%}" if kept[impl] else "not measured")
                      for impl, ms in sorted(pipes.items(), key=lambda kv: kv[1]))
    head = f"s={s}, {density:.0%} of blocks: cuDNN dense {min(dense):.3f} ms; {parts}"
    if not ok:
        return 0.0, head + f"; no pipeline keeps >= {KEEP:.0%} of exact top-k's needles"
    impl, ms = min(ok.items(), key=lambda kv: kv[1])
    return min(dense) / ms, f"{head}; counted: {impl} ({kept[impl][1]})"


CLAIMS = (
    Claim("selector_5x_dense_keeps_needles",
          "Exact top-k over a long sequence is itself expensive, so implementations approximate it: "
          "at 64K and 10% of blocks, a selector plus exact block-sparse attention >= 5x faster than "
          "dense attention that keeps >= 95% of the needles exact top-k keeps.",
          5.0, "x vs cuDNN dense", PAGE, "ours", "H200", SECTION,
          at_least(5.0, weak=True, wording=">= 5x with >= 95% of exact top-k's needle cells; slower, or "
                   "no selector keeping the needles, is 'not reproduced'"),
          Custom((T, "attention_dense", "needle_retrieval"),
                 "suite.techniques.sparse_prefill.claims:fast_selector_keeping_needles", ("latency_ms", "retrieval")),
          technique=T, runs_on=("H200",),
          quantity="cuDNN dense latency / (selector + our block-sparse kernel) latency, one timed call, "
                   "64K, 32 q / 8 kv heads, D 128, for the fastest selector retrieving >= 95% of the "
                   "needle cells (4K-128K x 11 depths x 3 strengths) exact top-k retrieves",
          note="the page says approximate selection is how top-k is made affordable; the bar (5x, half "
               "the 10x a 10% block budget saves in pairs, with the needles kept) is ours, not a "
               "figure the page states"),
)
