"""The sweep technique: conditional correctness of FP32 emulation (page: "BF16x6 ... valid when the exponent range is
known to be well behaved, roughly [-110, 111]"): every gemm_fp32_emulation implementation over a
grid of operand exponents, wide exponent spreads, denormal probes and the BF16x6 cliff class (sweep.py)."""
from dataclasses import replace

from suite.spec import REL_ERR, Case, Technique


def _sweep(cid: str, n: int, grid: str, tiers: tuple[str, ...]) -> Case:
    # The case itself runs at exponent 0; the probe walks the grid, one row per point and metric.
    return Case(cid, {"m": n, "n": n, "k": n, "dist": "unit_exp", "sweep": grid}, tiers, seeds=1)


def sweep_technique(gemm: Technique) -> Technique:
    """gemm_fp32_emulation_sweep: the same implementations as `gemm`, one kernel per scheme."""
    return replace(
        gemm,
        name="gemm_fp32_emulation_sweep",
        section="BF16x9 and BF16x6 — conditional correctness over exponent ranges",
        # The same implementation targets (same code, same hashes) as gemm_fp32_emulation, one kernel
        # per scheme: the register-split, K-concatenated, chained and TMA variants sum the same products.
        impls=tuple(i for i in gemm.impls if not i.name.endswith(("_regsplit", "_cat", "_chain", "_tma"))),
        cases=(
            _sweep("sweep_smoke", 32, "smoke", ("smoke",)),
            _sweep("sweep_coarse", 256, "coarse", ("nightly",)),
            _sweep("sweep_fine", 256, "fine", ("full",)),
        ),
        metrics=(REL_ERR,),
        flops=None,
        bytes=None,
        probe="suite.techniques.gemm_fp32_emulation.sweep:probe",
        claims=("bf16x6_range_lower_edge", "bf16x6_range_upper_edge", "bf16x6_as_x9_in_range"),
        smoke=("cublas_fp32", "triton_dot_bf16x6", "torch_emul_bf16x6"),  # the quick smoke tier's slice
    )
