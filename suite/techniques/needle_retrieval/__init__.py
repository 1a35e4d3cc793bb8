"""Needle retrieval through each selector + our block-sparse kernel (page: "Depth — the senior layer")."""
from suite.lib.selectors import SELECTORS
from suite.spec import LATENCY, REL_ERR, Case, Impl, Technique, Tolerance

_PKG = "suite.techniques.needle_retrieval"
_REF = f"{_PKG}.reference"


def _case(ctx: int, tiers, block=128, density=0.1, strengths=(0, 4, 8), hq=4, hkv=1, d=128) -> Case:
    return Case(f"ctx{ctx // 1024}k_b{block}_d{round(density * 100)}",
                {"ctx": ctx, "block": block, "density": density, "strength": 8,
                 "strengths": list(strengths), "hq": hq, "hkv": hkv, "d": d}, tiers, 1)


TECHNIQUE = Technique(
    name="needle_retrieval",
    section="Depth — sparse attention fails at retrieval, and perplexity cannot see it",
    reference=f"{_REF}:reference",
    make_inputs=f"{_REF}:make_inputs",
    empty_output=f"{_REF}:empty_output",
    impls=tuple(Impl(f"triton_{n}", f"{_PKG}.pipeline:run", args={"selector": n}, requires=("triton",),
                     baseline=n == "exact_topk") for n in SELECTORS),
    cases=(
        _case(1024, ("smoke",), block=64, density=0.1, strengths=(8,)),
        _case(4096, ("nightly",)),
        _case(16384, ("full",)),  # the nightly: 4K, 64K (the claims' length) and 128K
        _case(65536, ("nightly",)),
        _case(131072, ("nightly",)),
        _case(8192, ("full",)),
        _case(32768, ("full",)),
        _case(65536, ("full",), block=64),
    ),
    # Correctness on the anchor cell (needle inside the always-kept question block): the
    # pipeline's attention must match dense. Retrieval quality is the probe's grid.
    tolerances={"default": Tolerance(f"{_REF}:lowp_bf16", k=4.0)},
    metrics=(LATENCY, REL_ERR),
    probe=f"{_PKG}.probe:probe",
    description="Probe rows per grid cell (depth 0..100% in 11 steps x strength): recall (needle's "
                "block selected), fidelity_cos (sparse vs dense output), retrieval (nearest value "
                "is the needle's). Strength s: needle logit = ln(ctx) + s.",
    # The quick smoke tier's slice (every implementation runs in smoke_full).
    smoke=("triton_exact_topk", "triton_mean_pool"),
)
