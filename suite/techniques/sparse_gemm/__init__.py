"""Sparse GEMM break-even (page: "Sparsity, ordered by how usable it is"): dense bf16 cuBLAS against
unstructured CSR (cuSPARSE), tile-shaped zeros skipped by a Triton kernel, and 2:4 semi-structured
(cuSPARSELt), over densities; rates count the dense-equivalent 2*M*N*K flops."""
from suite.spec import LATENCY, REL_ERR, TFLOPS, Case, Impl, Technique, Tolerance

_PKG = "suite.techniques.sparse_gemm"
_REF = f"{_PKG}.reference"
NK = 4096  # N = K: a Llama-sized square projection
UNSTRUCTURED = (0.005, 0.01, 0.03125, 0.05, 0.1, 0.3, 0.5, 0.9)  # 0.03125: Monarch's density at n = 4096
BLOCK = (0.05, 0.1, 0.3, 0.5, 0.7, 0.9)


def _flops(p: dict) -> float:
    return 2.0 * p["m"] * p["n"] * p["k"]


def _bytes(p: dict) -> float:
    """The dense GEMM's least traffic in bf16: x, w and out once each."""
    return 2.0 * (p["m"] * p["k"] + p["n"] * p["k"] + p["m"] * p["n"])


def _case(m: int, pattern: str, density: float, tiers=("nightly",), n: int = NK, k: int = NK) -> Case:
    tag = {"unstructured": "unstr", "block": "block", "2:4": "24"}[pattern]
    d = f"{100 * density:g}".replace(".", "p")
    seeds = 2 if m * n * k >= 2**36 else 3
    return Case(f"m{m}_{tag}_d{d}", {"m": m, "n": n, "k": k, "pattern": pattern, "density": density},
                tiers, seeds)


_COMMON = dict(section="Sparsity, ordered by how usable it is", reference=f"{_REF}:reference",
               make_inputs=f"{_REF}:make_inputs", empty_output=f"{_REF}:empty_output",
               tolerances={"default": Tolerance(f"{_REF}:lowp_dense", k=2.0)},
               metrics=(LATENCY, TFLOPS, REL_ERR), flops=_flops, bytes=_bytes,
               ceilings={"tflops": "bf16_tflops"}, dense_equivalent=True)  # 2MNK flops, whatever is skipped
DENSE = Impl("cublas_dense", f"{_PKG}.cublas_dense:run", baseline=True,
             note="torch.mm on the bf16 weight, zeros included")
CSR = Impl("cusparse_csr", f"{_PKG}.cusparse_csr:run", requires=("cuda",),
           note="torch.mm(CSR weight, x^T), int32 indices: cuSPARSE SpMM (no bf16 CSR matmul on torch's CPU)",
           expect_failure="cuSPARSE bf16 SpMM as torch 2.11 calls it (H200, CUDA 13): its error grows with the "
                          "nonzeros per row, 2.3e-3 at 20 to 1.5e-2 at 3686 against 1.66e-3 for the dense bf16 "
                          "GEMM, over the 2x bound from ~128 per row (density 3%); timed only where it passes")
CSR_FP32 = Impl("cusparse_csr_fp32", f"{_PKG}.cusparse_csr:run", args={"fp32": True}, requires=("cuda",),
                note="the same CSR weight with fp32 values and fp32 activations (exact copies), fp32 SpMM, "
                     "rounded to bf16: the accurate cuSPARSE path, at twice the value bytes")

TECHNIQUE = Technique(
    name="sparse_gemm",
    audit_inputs=("x", "x32"),  # w, its CSR copies and tile lists carry the pattern
    time_depends_on_data=True,  # a random pattern / selection per instance
    impls=(DENSE, CSR, CSR_FP32,
           Impl("triton_tile_skip", f"{_PKG}.triton_tile_skip:run", requires=("triton",),
                note="walks only the nonzero 64x64 tiles of w (a CSR list over tiles)")),
    cases=(
        Case("m8_block_d50", {"m": 8, "n": 128, "k": 256, "pattern": "block", "density": 0.5}),
        Case("m8_unstr_d10", {"m": 8, "n": 128, "k": 256, "pattern": "unstructured", "density": 0.1}),
        Case("m40_block_d30", {"m": 40, "n": 192, "k": 128, "pattern": "block", "density": 0.3},
             ("smoke_full",)),
        *(_case(m, "unstructured", d) for m in (16, 4096) for d in UNSTRUCTURED),
        *(_case(m, "block", d) for m in (16, 4096) for d in BLOCK),
    ),
    smoke=("cublas_dense", "triton_tile_skip"),
    claims=("sparse_moderate_unstructured_slower", "sparse_block_buys_it_back", "monarch_vs_csr_same_density"),
    **_COMMON,
)

SEMI_STRUCTURED = Technique(
    name="sparse_gemm_24",
    audit_inputs=("x", "x32"),  # w, its CSR copies and tile lists carry the pattern
    impls=(DENSE, CSR, CSR_FP32,
           Impl("cusparselt_24", f"{_PKG}.semi_structured:run", args={"backend": "cusparselt"},
                requires=("cuda", "sm80"), note="SparseSemiStructuredTensorCUSPARSELT, F.linear (torch's "
                "CUTLASS 2:4 kernel runs on sm8x only: on the H200 it raised, so it is not listed)")),
    cases=(Case("m8_24_d50", {"m": 8, "n": 128, "k": 128, "pattern": "2:4", "density": 0.5}),
           *(_case(m, "2:4", 0.5) for m in (16, 4096))),
    claims=("sparse_24_2x_dense",),
    **_COMMON,
)

TECHNIQUES = (TECHNIQUE, SEMI_STRUCTURED)
