"""attn_cost: relative attention work of prefill and decode, from the page's section "#5 · Example"."""
from __future__ import annotations

SHAPES = (
    ("chat turn", 600, 400),
    ("RAG answer", 8_000, 500),
    ("doc analysis", 64_000, 1_000),
    ("repo-scale", 500_000, 2_000),
)


def attn_cost(prompt: int, generated: int, sparsity: float = 1.0) -> tuple[float, float]:
    """(prefill, decode) attention work in query-key pairs; sparsity = fraction of keys attended.

    Prefill is the triangle over the prompt, p^2/2; decode is one query against a growing
    cache, p*g + g^2/2. Both are scaled by sparsity, as on the page."""
    prefill = prompt * prompt / 2
    decode = prompt * generated + generated * generated / 2
    return prefill * sparsity, decode * sparsity


def predicted(prompt: int, generated: int, density: float = 0.10) -> dict:
    """The page's row: prefill share, dense and sparse work, and the saving. Sparsity helps
    prefill only: decode is counted dense in both (the page's `sparse = spf + ddc`)."""
    dpf, ddc = attn_cost(prompt, generated)
    spf, _ = attn_cost(prompt, generated, sparsity=density)
    dense, sparse = dpf + ddc, spf + ddc
    return {"prefill_share": dpf / dense if dense else 0.0, "dense": dense, "sparse": sparse,
            "saving": dense / sparse if sparse else 1.0}


def table(density: float = 0.10) -> str:
    """The page's printed table, recomputed."""
    lines = [f"{'workload':<16}{'prefill %':>10}{'dense':>12}{'@10% sparse':>13}{'saving':>9}", "-" * 60]
    for name, p, g in SHAPES:
        r = predicted(p, g, density)
        lines.append(f"{name:<16}{r['prefill_share'] * 100:>9.0f}%{r['dense']:>12.3e}"
                     f"{r['sparse']:>13.3e}{r['saving']:>8.1f}x")
    return "\n".join(lines)


def measured_saving(dense_prefill_ms: float, sparse_prefill_ms: float, decode_ms: float) -> float:
    """Measured counterpart of `saving`: (dense prefill + decode) / (sparse prefill + decode)."""
    return (dense_prefill_ms + decode_ms) / (sparse_prefill_ms + decode_ms)
