"""Prefill micro-optimisations (page: "Prefill micro-optimisations"): only the last position's logits
are needed, so the last layer's FFN (or the whole last layer after K/V) runs for that position alone;
layer 0's Q/K/V come from a per-token table, or layer 0 over a fixed prefix is computed once. Exactness vs
the full prefill and time vs the FLOP count; position 0's attention output against its value row."""
from suite.spec import LATENCY, REL_ERR, Case, Impl, Technique, Tolerance

_PKG = "suite.techniques.prefill_skips"
_REF = f"{_PKG}.reference"
_1B = {"layers": 2, "hidden": 2048, "heads": 32, "kv_heads": 8, "head_dim": 64, "inter": 8192, "vocab": 128256}
_TINY = {"layers": 2, "hidden": 64, "heads": 4, "kv_heads": 2, "head_dim": 16, "inter": 128, "vocab": 256}


def _impl(mode: str, note: str, **kw) -> Impl:
    return Impl(f"torch_{mode}", f"{_PKG}.model:run", args={"mode": mode}, note=note, **kw)


TECHNIQUE = Technique(
    name="prefill_skips",
    audit_inputs=("lnf",),  # the prefix tables are derived from ids and layer-0 weights
    section="Prefill micro-optimisations",
    reference=f"{_REF}:reference", make_inputs=f"{_REF}:make_inputs", empty_output=f"{_REF}:empty_output",
    impls=(
        _impl("full", "every layer over every position; logits of the last", baseline=True),
        _impl("skip_last_ffn", "the last layer's FFN for the last position only (the page's item)"),
        _impl("skip_last_layer", "the last layer: K/V for every position, the rest for the last only"),
        _impl("layer0_table", "layer 0's Q/K/V gathered from a (vocab x QKV) table built once"),
        _impl("prefix_layer0", "layer 0 over a fixed prefix (its output rows, rotated K and V) built once; "
                               "layer 0 runs for the positions after it only"),
    ),
    cases=(
        Case("tiny_t24", {**_TINY, "tokens": 24, "prefix": 12}, ("smoke",)),
        Case("tiny_t7", {**_TINY, "tokens": 7, "prefix": 3}, ("smoke_full",)),
        # Llama-3.2-1B layer shapes, two layers (the skipped share of a 16-layer stack is 1/8 of these)
        # a fixed prefix (system prompt) of half the prompt up to 2048 tokens, for prefix_layer0
        *(Case(f"l2_1b_t{t}", {**_1B, "tokens": t, "prefix": min(2048, t // 2)}, ("nightly",), 2)
          for t in (1024, 8192, 32768)),
    ),
    tolerances={"default": Tolerance(f"{_REF}:lowp", k=4.0)},
    metrics=(LATENCY, REL_ERR),
    probe=f"{_PKG}.probe:probe",
    claims=("prefill_last_ffn_skip_exact", "prefill_last_ffn_skip_saving"),
)
