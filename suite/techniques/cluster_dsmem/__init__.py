"""Thread block clusters (page: "Thread block clusters and distributed shared memory"): the same Triton
GEMM launched without clusters and in clusters of 2 and 4 CTAs (Triton's num_ctas, SM90+), cuBLAS
beside them; the probe records what the cluster launch compiled to and the GPU's shared memory."""
from suite.spec import LATENCY, REL_ERR, TFLOPS, Case, Impl, Technique, Tolerance

_PKG = "suite.techniques.cluster_dsmem"
_REF = f"{_PKG}.reference"
_KERNEL = f"{_PKG}.triton_cluster_gemm"


def _flops(p: dict) -> float:
    return 2.0 * p["m"] * p["n"] * p["k"]


def _bytes(p: dict) -> float:
    return 2.0 * (p["m"] * p["k"] + p["n"] * p["k"] + p["m"] * p["n"])


def _case(m: int, n: int, k: int, tiers=("nightly",), seeds: int = 3) -> Case:
    return Case(f"m{m}n{n}k{k}", {"m": m, "n": n, "k": k}, tiers, seeds)


TECHNIQUE = Technique(
    name="cluster_dsmem",
    section="Thread block clusters and distributed shared memory",
    reference=f"{_REF}:reference",
    make_inputs=f"{_REF}:make_inputs",
    empty_output=f"{_REF}:empty_output",
    impls=(
        Impl("triton_cta1", f"{_KERNEL}:run", args={"num_ctas": 1}, baseline=True, requires=("triton",),
             note="128x128x64 tiles, no cluster"),
        Impl("triton_cta2", f"{_KERNEL}:run", args={"num_ctas": 2}, requires=("triton",),
             note="the same kernel, num_ctas=2: clusters of 2 CTAs splitting each tile (SM90+)"),
        Impl("triton_cta4", f"{_KERNEL}:run", args={"num_ctas": 4}, requires=("triton",),
             note="the same kernel, num_ctas=4"),
        Impl("cublas_bf16", f"{_KERNEL}:cublas", note="torch.mm: the ceiling beside them"),
    ),
    cases=(
        _case(64, 96, 128, ("smoke",)),
        _case(4096, 4096, 4096),
        _case(8192, 8192, 1024),
    ),
    tolerances={"default": Tolerance(f"{_REF}:lowp", k=2.0)},
    metrics=(LATENCY, TFLOPS, REL_ERR),
    ceilings={"tflops": "bf16_tflops"},  # share of the bf16 GEMM ceiling the run measured
    flops=_flops,
    bytes=_bytes,
    probe=f"{_PKG}.probe:probe",
    smoke=("triton_cta1", "triton_cta2", "cublas_bf16"),
    claims=("dsmem_l2_combined_bandwidth", "b200_227kb_smem_per_block"),
)
