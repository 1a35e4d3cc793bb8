"""Roofline projections for claims on hardware we do not have: datasheet rates, optionally scaled
by the efficiency we measured on our own GPU. Every one is a projection, never a measurement."""
from __future__ import annotations

from suite.claims.datasheets import cite, rate
from suite.claims.spec import Projection

OURS = "H200"


def attention_b200(analog: float | None) -> Projection:
    """B200 attention TFLOP/s if it reached the fraction of peak our best H200 dense attention does.
    analog: our best dense attention throughput on the H200 as a percentage of its BF16 peak."""
    peak = rate("B200", "bf16").value
    sources = (cite("B200", "bf16"), cite(OURS, "bf16"))
    if analog is None:
        return Projection(None, "TFLOP/s", "needs an H200 dense-attention measurement", sources)
    return Projection(analog / 100 * peak, "TFLOP/s",
                      f"B200 BF16 peak {peak:g} x {analog:.1f}% (the share of H200 peak our best dense "
                      "attention reaches); FA4's Blackwell-specific gains are not in it", sources)


def fp32_emulation_blackwell(analog: float | None, gpu: str = "GB200", products: int = 9) -> Projection:
    """BF16xN speedup over native FP32 on Blackwell: the BF16/(N x FP32) roofline ceiling, times the
    fraction of the H200 ceiling our measured speedup reaches (analog: speedup on the H200)."""
    ceiling = rate(gpu, "bf16").value / (products * rate(gpu, "fp32").value)
    ours = rate(OURS, "bf16").value / (products * rate(OURS, "fp32").value)
    sources = (cite(gpu, "bf16"), cite(gpu, "fp32"), cite(OURS, "bf16"), cite(OURS, "fp32"))
    if analog is None:
        return Projection(ceiling, "x", f"{gpu} roofline ceiling bf16/({products} x fp32) = {ceiling:.2f}x; "
                          "no H200 measurement to scale it by", sources)
    eff = analog / ours
    return Projection(ceiling * eff, "x",
                      f"{gpu} ceiling bf16/({products} x fp32) = {ceiling:.2f}x, times our H200 efficiency "
                      f"{analog:.2f}x / {ours:.2f}x ceiling = {eff:.0%}", sources)


def bandwidth_fraction_h200(analog: float | None, fraction: float = 0.78, gpu: str = "H100") -> Projection:
    """Achieved bandwidth of a kernel reaching `fraction` of `gpu`'s HBM peak, and the same fraction
    of the H200's peak (a bandwidth-bound decode would scale with it)."""
    a, ours = rate(gpu, "hbm").value, rate(OURS, "hbm").value
    return Projection(fraction * ours, "TB/s",
                      f"{fraction:.0%} of {gpu} {a:g} TB/s = {fraction * a:.2f} TB/s; the same fraction of "
                      f"H200 {ours:g} TB/s = {fraction * ours:.2f} TB/s", (cite(gpu, "hbm"), cite(OURS, "hbm")))


def decode_ms_h200(analog: float | None, ms: float = 12.5, gpu: str = "A100-40GB") -> Projection:
    """A bandwidth-bound per-token decode time moved to the H200 by the ratio of HBM bandwidths."""
    a, ours = rate(gpu, "hbm").value, rate(OURS, "hbm").value
    return Projection(ms * a / ours, "ms/token",
                      f"{ms:g} ms x {gpu} {a:g} TB/s / H200 {ours:g} TB/s (decode streams the weights: "
                      "time scales with bandwidth; the A100 variant is recalled, not given by the page)",
                      (cite(gpu, "hbm"), cite(OURS, "hbm")))


def kv_read_ratio(analog: float | None, value: float = 11.6, what: str = "") -> Projection:
    """A bandwidth-bound decode speedup equals the ratio of KV bytes read on any GPU."""
    return Projection(value, "x", "decode is bandwidth-bound: speedup = ratio of KV bytes read, whatever "
                      "the GPU's datasheet bandwidth (it cancels)" + (f"; {what}" if what else ""), ())


def none_possible(reason: str) -> Projection:
    return Projection(None, "", reason, ())


def ratio_cancels(analog: float | None) -> Projection:
    """A ratio of two kernels on one GPU: datasheet rates cancel, so no roofline projection exists."""
    return none_possible("a ratio of two kernels on the same GPU: datasheet rates cancel; "
                         "only running both kernels on that GPU can check it")


def no_datasheet(analog: float | None) -> Projection:
    """Pre-release hardware: no datasheet rates to project from."""
    return none_possible("no published datasheet rates for this hardware in our table")


def fp4_over_fp8_b200(analog: float | None) -> Projection:
    """B200 dense FP4 / FP8 tensor-core rate from its datasheet: what the claim would read there."""
    fp4, fp8 = rate("B200", "fp4").value, rate("B200", "fp8").value
    return Projection(fp4 / fp8, "x", f"B200 datasheet dense FP4 {fp4:g} / FP8 {fp8:g} TFLOP/s = "
                      f"{fp4 / fp8:.2f}x (datasheet peaks, not a measurement; no FP4 tensor cores on "
                      "the H200 to measure)", (cite("B200", "fp4"), cite("B200", "fp8")))
