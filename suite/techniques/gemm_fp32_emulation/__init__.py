"""FP32 GEMM and its emulation on lower-precision tensor cores (page: "BF16x9 and BF16x6")."""
from suite.spec import LATENCY, REL_ERR, TFLOPS, Case, Impl, Technique, Tolerance
from suite.techniques.gemm_fp32_emulation.sweep_spec import sweep_technique

_REF = "suite.techniques.gemm_fp32_emulation.reference"
_PKG = "suite.techniques.gemm_fp32_emulation"


def _flops(p: dict) -> float:
    return 2.0 * p["m"] * p["n"] * p["k"]


def _bytes(p: dict) -> float:
    return 4.0 * (p["m"] * p["k"] + p["k"] * p["n"] + p["m"] * p["n"])


def _square(n: int, tiers: tuple[str, ...], seeds: int = 3) -> Case:
    return Case(f"m{n}n{n}k{n}", {"m": n, "n": n, "k": n}, tiers, seeds)


def _ours(name: str, kernel: str, scheme: str, note: str, expect_failure: str = "", nightly: bool = True,
          **args) -> Impl:
    return Impl(name, f"{_PKG}.{kernel}:run", args={"scheme": scheme, **args}, requires=("triton",),
                accuracy=scheme, note=note, expect_failure=expect_failure, nightly=nightly)


def _dot(precision: str, nightly: bool = True) -> Impl:
    """Triton's built-in tl.dot(input_precision=...) on fp32 operands."""
    return Impl(f"triton_dot_{precision}", f"{_PKG}.triton_gemm_kernel:run", args={"precision": precision},
                requires=("triton",), accuracy="fp32" if precision == "ieee" else precision, nightly=nightly)


_PLANES = "bf16 planes (split kernel) + one GEMM, IEEE add per K step"
_TMA = "bf16 planes loaded by TMA descriptors + one GEMM, IEEE add per K step"
_WS = "bf16 planes by TMA, warp-specialised GEMM (a producer and two consumer warpgroups)"
_REGSPLIT = "fp32 tiles split into bf16 in registers"
_CAT = "bf16 planes, each step's products as two K-concatenated dots"
_CHAIN = "bf16 planes, one tensor-core chain over all of K"
_FP32_ROUNDING = 4 * 2.0 ** -24

# On the H200 the tensor cores' own accumulation over all of K loses fp32 accuracy (5e-5, 3e-5).
_LONG_CHAIN = "one tensor-core accumulation over all of K is not fp32-accurate on sm_90"

def _ceiling(impl):
    """bf16xN schemes: the bf16 GEMM ceiling / N (their limit); IEEE fp32: the fp32 GEMM ceiling."""
    if impl.accuracy.startswith("bf16x"):
        return ("bf16_tflops", int(impl.accuracy[len("bf16x"):]))
    return "fp32_tflops" if impl.accuracy == "fp32" else None


TECHNIQUE = Technique(
    name="gemm_fp32_emulation",
    section="BF16x9 and BF16x6 — FP32 accuracy on BF16 silicon",
    reference=f"{_REF}:reference",
    make_inputs=f"{_REF}:make_inputs",
    empty_output=f"{_REF}:empty_output",
    impls=(
        Impl("cublas_fp32", f"{_PKG}.cublas:run", args={"precision": "ieee"}, baseline=True,
             accuracy="fp32", note="torch.matmul, fp32_precision='ieee' (cuBLAS on the GPU)"),
        Impl("cublas_tf32", f"{_PKG}.cublas:run", args={"precision": "tf32"}, accuracy="tf32",
             note="torch.matmul, fp32_precision='tf32'"),
        # Triton's own fp32 and tf32 dots are no scheme of the page's: tracked in the full tier only.
        *(_dot(p, nightly=False) for p in ("ieee", "tf32", "tf32x3")),  # no scheme the claims compare
        _dot("bf16x3"),
        # Triton's built-in bf16x6 (0.77x ours at 8192^3) is the record's; its compile cost the nightly 11 s.
        _dot("bf16x6", nightly=False),
        _ours("triton_bf16x9", "triton_planes_kernel", "bf16x9", _PLANES),
        _ours("triton_bf16x6", "triton_planes_kernel", "bf16x6", _PLANES),
        _ours("triton_bf16x3", "triton_planes_kernel", "bf16x3", _PLANES),
        _ours("triton_tf32x3", "triton_planes_kernel", "tf32x3", _PLANES.replace("bf16", "tf32"),
              nightly=False),  # slower than cuBLAS FP32 (0.76x) and in no claim; the sweep keeps it
        *(_ours(f"triton_{s}_tma", "triton_tma_kernel", s, _TMA) for s in ("bf16x9", "bf16x6", "bf16x3")),
        *(_ours(f"triton_{s}_ws", "triton_ws_kernel", s, _WS) for s in ("bf16x9", "bf16x6", "bf16x3")),
        # The register-split and K-concatenated designs lost to the planes kernels at 8192^3
        # (docs/numerics_gemm.md): kept for the record in the full tier.
        *(_ours(f"triton_{s}_regsplit", "triton_regsplit_kernel", s, _REGSPLIT, nightly=False)
          for s in ("bf16x9", "bf16x6", "bf16x3")),
        *(_ours(f"triton_{s}_cat", "triton_cat_kernel", s, _CAT, nightly=False) for s in ("bf16x9", "bf16x6", "bf16x3")),
        _ours("triton_bf16x9_chain", "triton_planes_kernel", "bf16x9", _CHAIN, _LONG_CHAIN, promote=False),
        _ours("triton_bf16x3_chain", "triton_planes_kernel", "bf16x3", _CHAIN, _LONG_CHAIN, promote=False),
        # Fast and wrong, judged in the fp32 class on purpose: the gate must mark it failed.
        Impl("cublas_bf16x9_kcat", f"{_PKG}.cublas_bf16x9_kcat:run", accuracy="fp32",
             note="one bf16 cuBLAS GEMM over K-concatenated pieces (9K), fp32 out",
             expect_failure="fast and wrong: one accumulation over 9K loses fp32 accuracy"),
        # The schemes in torch (exact products, IEEE adds): the CPU reference for CI sweeps.
        *(Impl(f"torch_emul_{s}", f"{_PKG}.torch_emul:run", args={"scheme": s}, requires=("cpu",),
               accuracy=s) for s in ("bf16x9", "bf16x6", "bf16x3", "tf32x3")),
    ),
    cases=(
        _square(64, ("smoke",)),
        Case("m96n80k112", {"m": 96, "n": 80, "k": 112}, ("smoke",)),
        _square(2048, ("nightly",)),
        _square(8192, ("nightly",)),
        _square(1024, ("full",)),
        _square(4096, ("full",)),
        _square(16384, ("full",), seeds=1),
        Case("m16384n256k8192", {"m": 16384, "n": 256, "k": 8192}, ("full",)),
        Case("m256n16384k8192", {"m": 256, "n": 16384, "k": 8192}, ("full",)),
        Case("m8192n8192k256", {"m": 8192, "n": 8192, "k": 256}, ("full",)),
    ),
    # The plain low-precision run of each scheme's math, against which error is judged, plus a floor
    # of 4 units of fp32 rounding (4 x 2**-24): an fp32 result is not judged finer than its own
    # rounding. Without it, on small K the plain run's error sits at that rounding and a correct
    # kernel summing in another order used 93-105% of k x it (triton_dot_bf16x6, sweep_smoke).
    # runners/smoke_calibration.json: every smoke check over 200 seeds uses at most half its bound.
    tolerances={s: Tolerance(f"{_REF}:lowp_{s}", k=4.0, floor=_FP32_ROUNDING)
                for s in ("fp32", "tf32", "tf32x3", "bf16x3", "bf16x6", "bf16x9")},
    metrics=(LATENCY, TFLOPS, REL_ERR),
    ceilings={"tflops": _ceiling},
    flops=_flops,
    bytes=_bytes,
    claims=("bf16_28x_fp32_gb200", "bf16x9_fp32_comparable", "bf16x9_up_to_3x",
            "bf16x6_range_lower_edge", "bf16x6_range_upper_edge", "bf16x6_as_x9_in_range"),
    # The quick smoke tier's slice (every implementation runs in smoke_full).
    smoke=("cublas_fp32", "triton_dot_bf16x6", "triton_bf16x9", "triton_bf16x6_tma", "triton_bf16x6_regsplit",
           "triton_bf16x6_cat", "cublas_bf16x9_kcat", "torch_emul_bf16x9"),
)

# The exponent sweep is a technique of its own (its own series) over the same implementations.
TECHNIQUES = (TECHNIQUE, sweep_technique(TECHNIQUE))
