"""Activations and the FFN's gate/up (page: "Component optimizations", activation functions and the
feed-forward network): GELU exact vs tanh approximation, SwiGLU fused vs unfused, and gate/up as two
GEMMs, one merged GEMM, or one merged GEMM with SwiGLU in its epilogue."""
from suite.spec import GBPS, LATENCY, REL_ERR, TFLOPS, Case, Impl, Technique, Tolerance

_PKG = "suite.techniques.activations"
_REF = f"{_PKG}.reference"
_T, _TR = f"{_PKG}.torch_ops", f"{_PKG}.triton_ops"
SECTION = "Component optimizations — the parts around the matmuls"
TRITON = ("triton",)
COPY = "suite.lib.bandwidth:copy_gbps"  # the ceiling: a device copy timed in the same job


def _gbps(nbytes):
    return {"gbps": lambda p: nbytes(p) * 1e-9}


def _gelu_bytes(p: dict) -> float:
    return 2.0 * 2 * p["tokens"] * p["n"]


def _swiglu_bytes(p: dict) -> float:
    return 2.0 * 3 * p["tokens"] * p["inter"]


def _ffn(t: int, h: int, i: int, tiers=("nightly",), seeds: int = 2) -> Case:
    return Case(f"t{t}h{h}i{i}", {"tokens": t, "hidden": h, "inter": i}, tiers, seeds)


GELU = Technique(
    name="activations", section=SECTION,
    reference=f"{_REF}:gelu_reference", make_inputs=f"{_REF}:gelu_inputs", empty_output=f"{_REF}:gelu_output",
    impls=(
        Impl("torch_gelu_exact", f"{_T}:gelu", baseline=True, note="F.gelu(approximate='none'), erf"),
        Impl("torch_gelu_tanh", f"{_T}:gelu", args={"approximate": "tanh"}, note="F.gelu(approximate='tanh')"),
        Impl("triton_gelu_exact", f"{_TR}:gelu", requires=TRITON, note="one pass, tl.math.erf"),
        Impl("triton_gelu_tanh", f"{_TR}:gelu", args={"approximate": "tanh"}, requires=TRITON,
             note="one pass, x * sigmoid(2u) (= tanh form), one exp"),
    ),
    cases=(
        Case("t8n512", {"tokens": 8, "n": 512, "accuracy": True}, ("smoke",)),
        Case("t16n8192", {"tokens": 16, "n": 8192}, ("nightly",), 2),
        Case("t16384n8192", {"tokens": 16384, "n": 8192, "accuracy": True}, ("nightly",), 2),
    ),
    # Both forms are judged against exact GELU: the approximation's error must hide under bf16 rounding.
    tolerances={"default": Tolerance(f"{_REF}:gelu_lowp", k=4.0)},
    metrics=(LATENCY, GBPS, REL_ERR), work=_gbps(_gelu_bytes), bytes=_gelu_bytes,
    probe=f"{_PKG}.probe:gelu_probe", ceiling=COPY, smoke=("torch_gelu_tanh", "triton_gelu_tanh"),
    claims=("gelu_tanh_under_quantization_noise", "gelu_tanh_much_cheaper"),
)

SWIGLU = Technique(
    name="swiglu", section=SECTION,
    reference=f"{_REF}:swiglu_reference", make_inputs=f"{_REF}:swiglu_inputs",
    empty_output=f"{_REF}:swiglu_output",
    impls=(
        Impl("torch_unfused", f"{_T}:swiglu", baseline=True, note="F.silu(gate) (a temporary), then * up"),
        Impl("triton_fused", f"{_TR}:swiglu", requires=TRITON, note="one pass: read gate and up, write silu(g) * u"),
    ),
    cases=(
        Case("t8i128", {"tokens": 8, "inter": 128}, ("smoke",)),
        Case("t16i8192", {"tokens": 16, "inter": 8192}, ("nightly",), 2),
        Case("t8192i8192", {"tokens": 8192, "inter": 8192}, ("nightly",), 2),
        Case("t4096i14336", {"tokens": 4096, "inter": 14336}, ("nightly",), 2),
    ),
    tolerances={"default": Tolerance(f"{_REF}:swiglu_lowp", k=4.0)},
    metrics=(LATENCY, GBPS, REL_ERR), work=_gbps(_swiglu_bytes), bytes=_swiglu_bytes,
    ceiling=COPY, claims=("swiglu_fused_one_pass",),
)

GATE_UP = Technique(
    name="gate_up_gemm", section=SECTION,
    reference=f"{_REF}:gate_up_reference", make_inputs=f"{_REF}:gate_up_inputs",
    empty_output=f"{_REF}:gate_up_output",
    impls=(
        Impl("torch_two_gemms", f"{_T}:gate_up", baseline=True, note="x @ W_gate, x @ W_up, silu, mul"),
        Impl("torch_merged_gemm", f"{_T}:gate_up", args={"merged": True},
             note="x @ [W_gate | W_up] (one cuBLAS GEMM), then silu(gate) * up"),
        Impl("triton_merged_swiglu", f"{_TR}:gate_up", requires=TRITON,
             note="one Triton GEMM over [W_gate | W_up], gate and up tiles side by side, SwiGLU in the epilogue"),
    ),
    cases=(
        _ffn(5, 64, 96, ("smoke",), 3),
        _ffn(72, 128, 64, ("smoke_full",), 3),
        *(_ffn(t, h, i) for h, i in ((2048, 8192), (4096, 14336)) for t in (16, 4096)),
    ),
    tolerances={"default": Tolerance(f"{_REF}:gate_up_lowp", k=4.0)},
    metrics=(LATENCY, TFLOPS, REL_ERR), flops=lambda p: 4.0 * p["tokens"] * p["hidden"] * p["inter"],
    ceilings={"tflops": "bf16_tflops"},  # share of the bf16 GEMM ceiling the run measured
    bytes=lambda p: 2.0 * (p["hidden"] * 2 * p["inter"] + p["tokens"] * (p["hidden"] + p["inter"])),
    claims=("gate_up_merged_one_gemm", "fused_activation_epilogue"),
)

TECHNIQUES = (GELU, SWIGLU, GATE_UP)
TECHNIQUE = GELU
