"""Block-sparse attention forward over a given block selection (page: "Design — sparse attention")."""
from suite.spec import LATENCY, REL_ERR, TFLOPS, Case, Impl, Technique, Tolerance

_PKG = "suite.techniques.attention_block_sparse"
_REF = f"{_PKG}.reference"


def _flops(p: dict) -> float:
    """Work actually computed: 4*D*block^2 per (query block, KV block) pair per query head."""
    from suite.lib.block_sparse import computed_blocks  # lazily: it imports torch, the spec does not

    n = p["s"] // p["block"]
    return 4.0 * p["d"] * p["block"] ** 2 * computed_blocks(n, n, p["density"]) * p["b"] * p["hq"]


def _case(s: int, block: int, density: float, tiers, hq=32, hkv=8, d=128, seeds=1) -> Case:
    cid = f"s{s}_b{block}_d{round(density * 100)}_h{hq}kv{hkv}"
    return Case(cid, {"b": 1, "hq": hq, "hkv": hkv, "s": s, "d": d, "block": block,
                      "density": density}, tiers, seeds)


TECHNIQUE = Technique(
    name="attention_block_sparse",
    audit_inputs=("q", "k", "v"),  # the block selection is the structure
    time_depends_on_data=True,  # a random pattern / selection per instance
    section="Design — sparse attention (exact attention over the selected blocks only)",
    reference=f"{_REF}:reference",
    make_inputs=f"{_REF}:make_inputs",
    empty_output=f"{_REF}:empty_output",
    impls=(
        Impl("triton_block_sparse", f"{_PKG}.triton_block_sparse:run", requires=("triton",),
             note="ours: one program per (query block, head), GQA group's index list"),
        Impl("flex_block_sparse", f"{_PKG}.flex_block_sparse:run", baseline=True,
             requires=("cuda",), note="torch.compile(flex_attention), same blocks as a BlockMask"),
    ),
    cases=(
        _case(256, 64, 0.3, ("smoke_full",), hq=4, hkv=2, d=64, seeds=2),
        _case(256, 128, 0.5, ("smoke",), hq=2, hkv=1, d=128, seeds=1),
        _case(65536, 128, 0.1, ("nightly",)),
        _case(65536, 64, 0.1, ("full",)),  # the nightly keeps 128-blocks, the claims' size
        _case(16384, 128, 0.1, ("full",)),
        _case(131072, 128, 0.1, ("full",)),
    ),
    tolerances={"default": Tolerance(f"{_REF}:lowp_bf16", k=4.0)},
    metrics=(LATENCY, TFLOPS, REL_ERR),
    ceilings={"tflops": "bf16_tflops"},  # share of the bf16 GEMM ceiling the run measured
    flops=_flops,
    description="Density is the fraction of causal (query, key) blocks computed; the diagonal "
                "block is always selected. tflops counts computed blocks in full, so it is "
                "throughput per computed block for both implementations.",
)
