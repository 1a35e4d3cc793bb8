"""Structured matrices (page: "Structured matrices — butterfly and Monarch"): one orthogonal butterfly
matrix as a dense GEMM, as a Monarch product and as a butterfly product, with parameter counts and
the error of the nearest Monarch to dense matrices; rates count the dense-equivalent 2*B*n*n flops."""
from suite.spec import LATENCY, REL_ERR, TFLOPS, Case, Impl, Technique, Tolerance

_PKG = "suite.techniques.monarch"
_REF = f"{_PKG}.reference"


def _flops(p: dict) -> float:
    return 2.0 * p["batch"] * p["n"] ** 2


def _bytes(p: dict) -> float:
    """The dense GEMM's least traffic in bf16: x, w and out once each."""
    return 2.0 * (2 * p["batch"] * p["n"] + p["n"] ** 2)


def _case(batch: int, n: int, nb: int, tiers=("nightly",), seeds: int = 3, project: bool = False) -> Case:
    params = {"batch": batch, "n": n, "nb": nb} | ({"project": True} if project else {})
    return Case(f"b{batch}_n{n}_nb{nb}", params, tiers, seeds)


_ROUNDED = "structured"  # products of bf16-rounded factors: more roundings than one dense GEMM

TECHNIQUE = Technique(
    name="monarch",
    section="Structured matrices — butterfly and Monarch",
    reference=f"{_REF}:reference",
    make_inputs=f"{_REF}:make_inputs",
    empty_output=f"{_REF}:empty_output",
    impls=(
        Impl("cublas_dense", f"{_PKG}.structured:run", args={"form": "dense"}, baseline=True,
             note="torch.mm on the n x n matrix in bf16"),
        Impl("torch_monarch", f"{_PKG}.structured:run", args={"form": "monarch"}, accuracy=_ROUNDED,
             note="two torch.bmm over nb blocks of bs x bs and bs blocks of nb x nb, a permutation between"),
        Impl("torch_butterfly", f"{_PKG}.structured:run", args={"form": "butterfly"}, accuracy=_ROUNDED,
             note="log2 n passes of 2x2 mixing in eager torch, fp32 between passes"),
    ),
    cases=(
        _case(8, 64, 8, ("smoke",), project=True),
        _case(24, 256, 4, ("smoke_full",)),
        _case(16, 4096, 64),
        _case(4096, 4096, 64, project=True),
        _case(4096, 16384, 128, seeds=2),
    ),
    tolerances={"default": Tolerance(f"{_REF}:lowp_dense", k=2.0),
                _ROUNDED: Tolerance(f"{_REF}:lowp_dense", k=4.0)},
    metrics=(LATENCY, TFLOPS, REL_ERR),
    ceilings={"tflops": "bf16_tflops"},  # share of the bf16 GEMM ceiling the run measured
    dense_equivalent=True,  # 2*B*n*n flops for the Monarch and butterfly products too
    flops=_flops,
    bytes=_bytes,
    probe=f"{_PKG}.probe:probe",
    claims=("monarch_vs_csr_same_density", "monarch_not_free_from_dense"),
)
