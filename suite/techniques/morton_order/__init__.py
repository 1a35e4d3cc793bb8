"""Morton (Z-order) tile traversal vs row-major vs grouped in a Triton GEMM (page: "Morton codes")."""
from suite.spec import LATENCY, REL_ERR, TFLOPS, Case, Impl, Technique, Tolerance

_PKG = "suite.techniques.morton_order"
_REF = f"{_PKG}.reference"


def _case(m: int, n: int, k: int, tiers, seeds=1) -> Case:
    return Case(f"m{m}n{n}k{k}", {"m": m, "n": n, "k": k}, tiers, seeds)


TECHNIQUE = Technique(
    name="morton_order",
    section="Morton codes — making the selected blocks addressable (locality for tiled kernels)",
    reference=f"{_REF}:reference",
    make_inputs=f"{_REF}:make_inputs",
    empty_output=f"{_REF}:empty_output",
    impls=tuple(Impl(f"triton_{o}", f"{_PKG}.triton_tiled_gemm:run", args={"order": o}, requires=("triton",),
                     baseline=o == "row_major",
                     note="same 128x128x64 tiles; only the program id -> tile map differs")
                for o in ("row_major", "grouped", "morton")),
    cases=(
        _case(96, 64, 32, ("smoke",), seeds=2),
        _case(8192, 8192, 8192, ("nightly",)),
        _case(16384, 16384, 4096, ("full",)),
        _case(4096, 4096, 4096, ("full",)),
    ),
    # Output bf16: the error budget is that of rounding the exact product to bf16.
    tolerances={"default": Tolerance(f"{_REF}:lowp_bf16_out", k=2.0, floor=1e-6)},
    metrics=(LATENCY, TFLOPS, REL_ERR),
    ceilings={"tflops": "bf16_tflops"},  # share of the bf16 GEMM ceiling the run measured
    flops=lambda p: 2.0 * p["m"] * p["n"] * p["k"],
    # The quick smoke tier's slice (every implementation runs in smoke_full).
    smoke=("triton_row_major", "triton_morton"),
)
