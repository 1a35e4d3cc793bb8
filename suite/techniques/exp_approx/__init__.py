"""exp2 on MUFU vs a polynomial on the FMA units vs both (page: "Approximate exponential, and
FlashAttention-4"): accuracy over the softmax range, compute-bound throughput, and inside softmax."""
from suite.spec import LATENCY, REL_ERR, Case, Impl, Metric, Technique, Tolerance

_PKG = "suite.techniques.exp_approx"
_REF = f"{_PKG}.reference"
TEXP = Metric("texp_per_s", "Texp/s", "higher")


def _exps(p: dict) -> float:
    """exp2 evaluations per call, in units of 1e12 (so work / seconds is T exp/s)."""
    n = p["rows"] * p["cols"] if p["kind"] == "softmax" else p["n"] * p["terms"]
    return n * 1e-12


def _triton(name: str, degree: int, sixteenths: int, accuracy: str, note: str, **kw) -> Impl:
    """A variant of the Triton kernels: `sixteenths`/16 of the elements by the degree-`degree`
    polynomial, the rest by MUFU."""
    return Impl(name, f"{_PKG}.common:launch", args={"degree": degree, "sixteenths": sixteenths},
                accuracy=accuracy, note=note, requires=TRITON, **kw)


def _elem(cid, n, tiers, stride, points, seeds=2) -> Case:
    return Case(cid, {"kind": "sum", "n": n, "terms": 1, "lo": -127.0, "accuracy": True,
                      "stride": stride, "uniform_points": points}, tiers, seeds)


TRITON = ("triton",)
TECHNIQUE = Technique(
    name="exp_approx",
    section="Approximate exponential, and FlashAttention-4",
    reference=f"{_REF}:reference",
    make_inputs=f"{_REF}:make_inputs",
    empty_output=f"{_REF}:empty_output",
    impls=(
        Impl("torch_eager", f"{_PKG}.torch_eager:run", accuracy="fp32",
             note="torch.exp2 / torch.softmax, fp32"),
        _triton("triton_mufu", 0, 0, "fp32", "tl.math.exp2 -> ex2.approx.ftz.f32 (MUFU.EX2)", baseline=True),
        *(_triton(f"triton_poly{d}", d, 16, f"poly{d}", f"degree-{d} minimax, FMA units only")
          for d in range(1, 6)),
        *(_triton(f"triton_hybrid3_f{round(100 * k / 16)}", 3, k, "poly3",
                  f"{k}/16 of elements by the degree-3 polynomial, the rest by MUFU",
                  nightly=k != 7) for k in (4, 5, 6, 7, 8)),  # f44: in no claim (claims.HYBRIDS), full tier
    ),
    cases=(
        _elem("elem_n4k", 1 << 12, ("smoke",), stride=1 << 18, points=1 << 12),
        Case("sum_t4_n4k", {"kind": "sum", "n": 1 << 12, "terms": 4, "lo": -8.0,
                             "delta": 0.0625}, ("smoke",)),
        Case("chain_t4_n4k", {"kind": "chain", "n": 1 << 12, "terms": 4, "shift": 1.5}, ("smoke",)),
        Case("softmax_r4c256", {"kind": "softmax", "rows": 4, "cols": 256}, ("smoke",)),
        _elem("elem_n16m", 1 << 24, ("nightly",), stride=1, points=1 << 24),
        Case("sum_t64_n8m", {"kind": "sum", "n": 1 << 23, "terms": 64, "lo": -8.0,
                             "delta": 0.0625}, ("nightly",), seeds=2),
        # Shift 1.5 has the fixed point -1, exact in fp32: every variant lands on it, so its
        # correctness check is vacuous (measured once, kept for its history); 1.25's is not.
        Case("chain_t64_n8m", {"kind": "chain", "n": 1 << 23, "terms": 64, "shift": 1.5},
             ("full",), seeds=1),
        Case("chain_s125_t64_n8m", {"kind": "chain", "n": 1 << 23, "terms": 64, "shift": 1.25},
             ("nightly",), seeds=2),
        Case("softmax_r8kc4k", {"kind": "softmax", "rows": 8192, "cols": 4096}, ("nightly",), seeds=2),
    ),
    # Judged against a plain fp32 torch run of the same kernel with the same exp2 (its error class).
    tolerances={"fp32": Tolerance(f"{_REF}:lowp_fp32", k=16.0),
                 **{f"poly{d}": Tolerance(f"{_REF}:lowp_poly{d}", k=4.0) for d in range(1, 6)}},
    metrics=(LATENCY, TEXP, REL_ERR),
    work={"texp_per_s": _exps},
    probe=f"{_PKG}.probe:probe",
    claims=("fa4_exp2_poly_deg3_rel_err", "exp2_hybrid_mufu_fma_throughput"),
    # The quick smoke tier's slice (every implementation runs in smoke_full).
    smoke=("torch_eager", "triton_mufu", "triton_poly3", "triton_hybrid3_f50"),
)
