"""The page's prefill-share arithmetic: attention work in query-key pairs, dense vs sparse."""
from __future__ import annotations

# The page's example workloads: (name, prompt tokens, generated tokens).
SHAPES = [("chat turn", 600, 400), ("RAG answer", 8_000, 500), ("doc analysis", 64_000, 1_000),
          ("repo-scale", 500_000, 2_000)]


def attn_cost(prompt: float, generated: float, sparsity: float = 1.0) -> tuple[float, float]:
    """(prefill, decode) pairs attended: prefill p^2/2, decode p*g + g^2/2, both times sparsity."""
    prefill = prompt * prompt / 2
    decode = prompt * generated + generated * generated / 2
    return prefill * sparsity, decode * sparsity


def summary(prompt: float, generated: float, sparsity: float) -> dict[str, float]:
    """Prefill share of dense work, dense and sparse totals, and the saving; sparsity cuts prefill only."""
    dpf, ddc = attn_cost(prompt, generated)
    spf, _ = attn_cost(prompt, generated, sparsity)
    dense, sparse = dpf + ddc, spf + ddc
    return {"prefill_share": dpf / dense if dense else 0.0, "dense": dense, "sparse": sparse,
            "saving": dense / sparse if sparse else 1.0}
