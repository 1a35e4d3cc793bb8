"""Block-scaled 4-bit formats (page: "Block-scaled versus block floating point", "Quantization
granularity", "Native FP4"): quantize-dequantize error of per-tensor, per-channel and blockwise INT4,
block floating point, MXFP4 and NVFP4 (FP8 beside them) on weights and activations, with the bits per
element of each (scales included). Pure numerics: figures from a CPU run are valid as they are."""
from suite.spec import LATENCY, REL_ERR, Case, Impl, Technique, Tolerance
from suite.techniques.block_scaled_formats.formats import FORMATS

_PKG = "suite.techniques.block_scaled_formats"
_REF = f"{_PKG}.reference"
# Outlier channels: 1 in 256 columns (the GEMM's K) scaled up; activations x50 (LLM.int8()'s
# emergent features are tens of times the rest), weights x10.
_DISTS = {"gauss": {"dist": "gaussian"}, "t3": {"dist": "student_t", "df": 3},
          "outlier": {"dist": "outlier", "outlier_frac": 1 / 256}}
_ROLES = {"w": ("weight", 10.0), "a": ("activation", 50.0)}


def _case(role: str, dist: str, rows: int, cols: int, tiers: tuple[str, ...], seeds: int = 3) -> Case:
    name, outlier_scale = _ROLES[role]
    params = {"role": name, "rows": rows, "cols": cols, **_DISTS[dist]}
    if dist == "outlier":
        params["outlier_scale"] = outlier_scale
    return Case(f"{role}_{dist}_r{rows}c{cols}", params, tiers, seeds)


def _smoke_tier(role: str, dist: str) -> tuple[str, ...]:
    return ("smoke",) if (role, dist) == ("a", "outlier") else ("smoke_full",)


TECHNIQUE = Technique(
    name="block_scaled_formats",
    section="Block-scaled versus block floating point",
    reference=f"{_REF}:reference",
    make_inputs=f"{_REF}:make_inputs",
    empty_output=f"{_REF}:empty_output",
    impls=tuple(Impl(f"torch_{name}", f"{_PKG}.torch_qdq:run", args={"fmt": name}, accuracy=name,
                     baseline=name == "fp8_e4m3_tensor", note=f.source)
                for name, f in FORMATS.items()),
    cases=(
        *(_case(r, d, 64, 256, _smoke_tier(r, d)) for r in _ROLES for d in _DISTS),
        # A million values (the page's "one scale for millions"), and four million in full; the nightly
        # (its time budget) keeps the three weight distributions and the activations' outlier channels.
        *(_case(r, d, 256, 4096, ("nightly",) if r == "w" or d == "outlier" else ("full",))
          for r in _ROLES for d in _DISTS),
        *(_case(r, d, 1024, 4096, ("full",), seeds=2) for r in _ROLES for d in _DISTS),
    ),
    # Each implementation must land on its format's specification, computed independently in fp64
    # by nearest value on an enumerated grid: the same error to 3 digits (on the CPU they agree
    # element for element; on the H200 a run at 795e7d6 exceeded k = 1 by the last digits, torch's
    # CUDA division by a Python number going through its reciprocal).
    tolerances={name: Tolerance(f"{_REF}:lowp_{name}", k=1.001, floor=1e-12) for name in FORMATS},
    metrics=(LATENCY, REL_ERR),
    probe=f"{_PKG}.probe:probe",
    claims=("per_tensor_useless_4bit", "nvfp4_lower_error_than_mxfp4", "fp4_2x_fp8_weight_bytes",
            "fp4_2x_fp8_throughput"),
    smoke=("torch_int4_tensor", "torch_bfp4_block32", "torch_mxfp4", "torch_nvfp4"),
)
