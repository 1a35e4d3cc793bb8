"""Online softmax inside attention forward (page: "Approximate exponential, and FlashAttention-4"):
each exp2 variant, and FlashAttention-4's conditional rescaling (skip while the max grows <= 8)."""
from suite.spec import LATENCY, REL_ERR, TFLOPS, Case, Impl, Technique, Tolerance

_PKG = "suite.techniques.softmax_online"
_REF = f"{_PKG}.reference"


def _flops(p: dict) -> float:
    """4*S^2*D per head (QK^T and PV), halved when causal."""
    f = 4.0 * p["b"] * p["h"] * p["s"] ** 2 * p["d"]
    return f / 2 if p["causal"] else f


def _case(b, h, s, d, causal, tiers, seeds=2) -> Case:
    cid = f"b{b}h{h}s{s}d{d}" + ("_causal" if causal else "")
    return Case(cid, {"b": b, "h": h, "s": s, "d": d, "causal": causal}, tiers, seeds)


def _impl(name: str, exp: int, degree: int, thresh: float, accuracy: str = "bf16", **kw) -> Impl:
    """A variant of the Triton kernel: exp 0 MUFU, 1 polynomial, 2 alternate columns, 3 every 4th
    KV block polynomial; degree of the polynomial; rescale only when a max grows by > thresh."""
    return Impl(name, f"{_PKG}.common:launch", args={"exp": exp, "degree": degree, "thresh": thresh},
                accuracy=accuracy, requires=("triton",), **kw)


TECHNIQUE = Technique(
    name="softmax_online",
    section="Approximate exponential, and FlashAttention-4",
    reference=f"{_REF}:reference",
    make_inputs=f"{_REF}:make_inputs",
    empty_output=f"{_REF}:empty_output",
    impls=(
        Impl("torch_sdpa", f"{_PKG}.torch_sdpa:run", accuracy="bf16",
             note="F.scaled_dot_product_attention, default backend"),
        _impl("triton_mufu", 0, 0, 0.0, baseline=True, note="MUFU exp2, rescale every KV block"),
        _impl("triton_mufu_cond8", 0, 0, 8.0, note="MUFU exp2, rescale only when a max grows by > 8"),
        _impl("triton_poly3", 1, 3, 0.0, "bf16_poly3", note="degree-3 polynomial exp2 for every score"),
        _impl("triton_hybrid3_f50", 2, 3, 0.0, "bf16_poly3", note="even columns polynomial, odd MUFU"),
        _impl("triton_hybrid3_b25", 3, 3, 0.0, "bf16_poly3", note="every 4th KV block polynomial"),
        _impl("triton_hybrid3_f50_cond8", 2, 3, 8.0, "bf16_poly3", note="half polynomial + conditional rescale"),
    ),
    cases=(
        _case(1, 2, 128, 64, False, ("smoke_full",)),
        _case(1, 2, 96, 64, True, ("smoke",)),
        _case(4, 16, 4096, 64, False, ("nightly",)),
        _case(4, 16, 4096, 128, False, ("full",)),
        _case(4, 16, 4096, 128, True, ("nightly",)),
        _case(1, 32, 16384, 128, True, ("full",), seeds=1),
    ),
    tolerances={"bf16": Tolerance(f"{_REF}:lowp_bf16", k=4.0),
                "bf16_poly3": Tolerance(f"{_REF}:lowp_bf16_poly3", k=4.0)},
    metrics=(LATENCY, TFLOPS, REL_ERR),
    ceilings={"tflops": "bf16_tflops"},  # share of the bf16 GEMM ceiling the run measured
    flops=_flops,
    probe=f"{_PKG}.probe:probe",
    claims=("fa4_conditional_rescale",),
    # The quick smoke tier's slice (every implementation runs in smoke_full).
    smoke=("torch_sdpa", "triton_mufu", "triton_poly3"),
)
