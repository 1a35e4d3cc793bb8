"""Selector + our block-sparse kernel, one timed call over a causal prefill (page: "Design — sparse attention")."""
from suite.spec import LATENCY, REL_ERR, Case, Impl, Technique, Tolerance

_PKG = "suite.techniques.sparse_prefill"
_REF = f"{_PKG}.reference"


def _case(s: int, block: int, density: float, tiers, hq=32, hkv=8, d=128, seeds=1) -> Case:
    return Case(f"s{s}_b{block}_d{round(density * 100)}_h{hq}kv{hkv}",
                {"b": 1, "hq": hq, "hkv": hkv, "s": s, "d": d, "block": block, "density": density},
                tiers, seeds)


def _impl(selector: str, **kw) -> Impl:
    return Impl(f"triton_{selector}", f"{_PKG}.pipeline:run", args={"selector": selector},
                requires=("triton",), **kw)


TECHNIQUE = Technique(
    name="sparse_prefill",
    section="Design — sparse attention: the primitive, top-k approximation",
    reference=f"{_REF}:reference",
    make_inputs=f"{_REF}:make_inputs",
    empty_output=f"{_REF}:empty_output",
    impls=(
        _impl("msa_index", baseline=True, note="torch-eager MSA index selector, then our kernel"),
        _impl("msa_fused", note="the same selection by three Triton kernels, then our kernel"),
    ),
    cases=(
        _case(256, 64, 0.5, ("smoke",), hq=4, hkv=2, d=64, seeds=2),
        _case(65536, 128, 0.1, ("nightly",)),
        _case(16384, 128, 0.1, ("full",)),
        _case(131072, 128, 0.1, ("full",)),
    ),
    # The oracle attends over the torch msa_index selection, so a pipeline passes only if its
    # selector picks those blocks (the kernel's accuracy is attention_block_sparse's check).
    tolerances={"default": Tolerance(f"{_REF}:lowp_bf16", k=4.0)},
    metrics=(LATENCY, REL_ERR),
    description="Wall time of selection + attention over a whole causal prefill (selector and "
                "kernel in one timed call), at the block density of attention_block_sparse; "
                "compare its latency with attention_dense's sdpa_cudnn at the same shape.",
)
