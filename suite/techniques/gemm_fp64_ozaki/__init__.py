"""FP64 GEMM emulated on int8 tensor cores, the Ozaki scheme (page: "BF16x9 and BF16x6": the same
idea "one precision further down", DGEMM without FP64 arithmetic)."""
from suite.spec import LATENCY, REL_ERR, TFLOPS, Case, Impl, Technique, Tolerance

_REF = "suite.techniques.gemm_fp64_ozaki.reference"
_PKG = "suite.techniques.gemm_fp64_ozaki"


def _flops(p: dict) -> float:
    return 2.0 * p["m"] * p["n"] * p["k"]  # fp64-equivalent work, whatever the slices cost


def _square(n: int, tiers: tuple[str, ...], seeds: int = 2) -> Case:
    return Case(f"m{n}n{n}k{n}", {"m": n, "n": n, "k": n}, tiers, seeds)


def _ozaki(s: int) -> Impl:
    return Impl(f"cublas_int8_ozaki_s{s}", f"{_PKG}.cublas_int8_ozaki:run", args={"slices": s}, accuracy=f"ozaki_s{s}",
                note=f"{s} int8 slices per operand, {s * (s + 1) // 2} slice products, torch._int_mm")


TECHNIQUE = Technique(
    name="gemm_fp64_ozaki",
    section="BF16x9 and BF16x6 — the Ozaki scheme one precision down (FP64 on int8)",
    reference=f"{_REF}:reference",
    make_inputs=f"{_REF}:make_inputs",
    empty_output=f"{_REF}:empty_output",
    impls=(
        Impl("cublas_fp64", f"{_PKG}.cublas_fp64:run", baseline=True, accuracy="fp64",
             note="torch.matmul on float64"),
        _ozaki(6), _ozaki(7), _ozaki(8),
    ),
    cases=(
        Case("m64n64k64", {"m": 64, "n": 64, "k": 64}, ("smoke",)),
        Case("m40n48k200_spread20", {"m": 40, "n": 48, "k": 200, "spread": 20}, ("smoke",)),
        Case("m256n256k256", {"m": 256, "n": 256, "k": 256}, ("nightly",)),
        _square(4096, ("nightly",)),
        _square(8192, ("nightly",), seeds=1),
        _square(1024, ("full",)),
        Case("m256n256k256_spread30", {"m": 256, "n": 256, "k": 256, "spread": 30}, ("full",)),
        Case("m8192n8192k256", {"m": 8192, "n": 8192, "k": 256}, ("full",), seeds=1),
    ),
    tolerances={
        "fp64": Tolerance(f"{_REF}:lowp_fp64", k=4.0, floor=1e-15),
        "ozaki_s6": Tolerance(f"{_REF}:lowp_ozaki_s6", k=4.0, floor=1e-15),
        "ozaki_s7": Tolerance(f"{_REF}:lowp_ozaki_s7", k=4.0, floor=1e-15),
        "ozaki_s8": Tolerance(f"{_REF}:lowp_ozaki_s8", k=4.0, floor=1e-15),
    },
    metrics=(LATENCY, TFLOPS, REL_ERR),
    ceilings={"tflops": "fp64_tflops"},  # Ozaki on int8 too: its share shows where it passes fp64
    flops=_flops,
    claims=(),
    # The quick smoke tier's slice (every implementation runs in smoke_full).
    smoke=("cublas_fp64", "cublas_int8_ozaki_s7", "cublas_int8_ozaki_s8"),
)
