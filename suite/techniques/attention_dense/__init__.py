"""Dense causal GQA attention baselines (page: "Design — sparse attention", the thing avoided)."""
from suite.spec import LATENCY, REL_ERR, TFLOPS, Case, Impl, Technique, Tolerance

_PKG = "suite.techniques.attention_dense"
_REF = f"{_PKG}.reference"
_SDPA = f"{_PKG}.sdpa:run"


def _flops(p: dict) -> float:
    """Causal: half of 4*S^2*D per query head (the convention of the 574 TFLOP/s figure)."""
    return 2.0 * p["s"] ** 2 * p["d"] * p["b"] * p["hq"]


def _case(s: int, tiers, hq=32, hkv=8, d=128, seeds=1) -> Case:
    return Case(f"s{s}_h{hq}kv{hkv}_d{d}", {"b": 1, "hq": hq, "hkv": hkv, "s": s, "d": d},
                tiers, seeds)


TECHNIQUE = Technique(
    name="attention_dense",
    section="Design — sparse attention (dense causal baseline)",
    reference=f"{_REF}:reference",
    make_inputs=f"{_REF}:make_inputs",
    empty_output=f"{_REF}:empty_output",
    impls=(
        Impl("sdpa_cudnn", _SDPA, args={"backend": "CUDNN_ATTENTION"}, baseline=True, requires=("cuda",)),
        Impl("sdpa_flash", _SDPA, args={"backend": "FLASH_ATTENTION"}, requires=("cuda",)),
        Impl("sdpa_efficient", _SDPA, args={"backend": "EFFICIENT_ATTENTION"}, requires=("cuda",)),
        Impl("flex_causal", f"{_PKG}.flex_causal:run", requires=("cuda",)),
        Impl("sdpa_math", _SDPA, args={"backend": "MATH"}, requires=("cpu",),
             note="CPU only: materialises S^2 scores"),
    ),
    cases=(
        _case(256, ("smoke",), hq=4, hkv=2, d=64, seeds=2),
        _case(16384, ("full",)),
        _case(65536, ("nightly",)),
        _case(4096, ("full",)),
        _case(131072, ("full",)),
    ),
    tolerances={"default": Tolerance(f"{_REF}:lowp_bf16", k=4.0)},
    metrics=(LATENCY, TFLOPS, REL_ERR),
    ceilings={"tflops": "bf16_tflops"},  # share of the bf16 GEMM ceiling the run measured
    flops=_flops,
)
