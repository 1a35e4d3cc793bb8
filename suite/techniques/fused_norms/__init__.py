"""Fused RMSNorm / LayerNorm (page: "Normalization, and the cost of the small operations"): one pass
with one reciprocal square root and the residual add fused, against unfused torch ops,
torch.nn.functional and torch.compile; GB/s, and its share of the copy bandwidth measured in the
same job (ceiling_share)."""
from suite.spec import GBPS, LATENCY, REL_ERR, Case, Impl, Technique, Tolerance

_PKG = "suite.techniques.fused_norms"
_REF = f"{_PKG}.reference"


def _bytes(p: dict) -> float:
    """Least bytes per call: x (and residual) read, y (and the new residual) written, bf16."""
    return 2.0 * p["tokens"] * p["hidden"] * (4 if p.get("residual") else 2)


def _case(kind: str, residual: bool, tokens: int, hidden: int, tiers=("nightly",), seeds: int = 2) -> Case:
    cid = f"{kind}{'_res' if residual else ''}_t{tokens}h{hidden}"
    return Case(cid, {"kind": kind, "residual": residual, "tokens": tokens, "hidden": hidden}, tiers, seeds)


TECHNIQUE = Technique(
    name="fused_norms",
    section="Normalization, and the cost of the small operations",
    reference=f"{_REF}:reference",
    make_inputs=f"{_REF}:make_inputs",
    empty_output=f"{_REF}:empty_output",
    impls=(
        Impl("triton_fused", f"{_PKG}.triton_fused:run", requires=("triton",),
             note="read (x, residual) once, fp32 in registers, rsqrt once, write y and h; warps and rows per "
                  "program by hidden size (suite.lib.norm_triton.config_for); LayerNorm's mean and variance "
                  "from two reductions from hidden 2048 up, one below (one_reduce_for)"),
        Impl("torch_unfused", f"{_PKG}.torch_norms:run", args={"mode": "unfused"}, baseline=True,
             accuracy="two_roundings",
             note="Hugging Face formulation in separate torch ops (add, float, pow, mean, rsqrt, mul, cast, mul)"),
        Impl("torch_functional", f"{_PKG}.torch_norms:run", args={"mode": "functional"},
             note="torch add, then torch.nn.functional.rms_norm / layer_norm"),
        Impl("torch_compile", f"{_PKG}.torch_norms:run", args={"mode": "compile"}, requires=("cuda",),
             accuracy="two_roundings",
             note="torch.compile(dynamic=False) of the unfused ops (Inductor fuses them)"),
    ),
    cases=(
        _case("rms", True, 8, 64, ("smoke",), 3),
        _case("layer", False, 8, 64, ("smoke",), 3),
        _case("rms", False, 5, 96, ("smoke_full",), 3),
        _case("layer", True, 3, 200, ("smoke_full",), 3),
        *(_case("rms", True, t, h) for h in (2048, 8192) for t in (1, 16384)),
        *(_case(k, False, 16384, h) for h in (2048, 4096) for k in ("rms", "layer")),
    ),
    # Judged against the same math in fp32 with each output rounded to bf16 once.
    # The Hugging Face formulation rounds the normalised row to bf16 before the weight multiply: a
    # second rounding (up to 2.04x the one-rounding error over 200 seeds), hence its wider k.
    tolerances={"default": Tolerance(f"{_REF}:lowp", k=4.0), "two_roundings": Tolerance(f"{_REF}:lowp", k=5.0)},
    metrics=(LATENCY, GBPS, REL_ERR),
    work={"gbps": lambda p: _bytes(p) * 1e-9},
    bytes=_bytes,
    ceiling="suite.lib.bandwidth:copy_gbps",
    smoke=("triton_fused", "torch_unfused"),
    claims=("fused_norm_85pct_copy_bandwidth", "fused_norm_beats_unfused", "rmsnorm_saves_a_pass"),
)
