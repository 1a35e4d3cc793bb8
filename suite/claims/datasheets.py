"""Datasheet peak rates per GPU (dense, no 2:4 sparsity), each with its source: the only inputs of
projections and of the hardware-arithmetic claims."""
from __future__ import annotations

from dataclasses import dataclass

_H100_SHEET = "NVIDIA H100 Tensor Core GPU datasheet (SXM5); sparse tensor figures halved"
_H200_SHEET = "NVIDIA H200 Tensor Core GPU datasheet (SXM); sparse tensor figures halved"
_A100_SHEET = "NVIDIA A100 Tensor Core GPU datasheet (SXM); sparse tensor figures halved"
_HGX_B200 = "NVIDIA HGX B200 datasheet (8-GPU board figures / 8; sparse tensor figures halved)"
_GB200 = "NVIDIA GB200 NVL72 datasheet (72-GPU rack figures / 72; sparse tensor figures halved)"


@dataclass(frozen=True)
class Rate:
    value: float
    unit: str
    source: str


def _gpu(sheet: str, **rates: tuple[float, str]) -> dict[str, Rate]:
    return {k: Rate(v, u, sheet) for k, (v, u) in rates.items()}


# Keys: bf16/fp8/fp4/tf32 tensor-core dense TFLOP/s, fp32 (non-tensor) TFLOP/s, hbm TB/s.
SHEETS: dict[str, dict[str, Rate]] = {
    "A100-40GB": _gpu(_A100_SHEET, bf16=(312, "TFLOP/s"), tf32=(156, "TFLOP/s"), fp32=(19.5, "TFLOP/s"),
                      hbm=(1.555, "TB/s")),
    "A100-80GB": _gpu(_A100_SHEET, bf16=(312, "TFLOP/s"), tf32=(156, "TFLOP/s"), fp32=(19.5, "TFLOP/s"),
                      hbm=(2.039, "TB/s")),
    "H100": _gpu(_H100_SHEET, bf16=(989.5, "TFLOP/s"), fp8=(1979, "TFLOP/s"), tf32=(494.5, "TFLOP/s"),
                 fp32=(67, "TFLOP/s"), hbm=(3.35, "TB/s")),
    "H200": _gpu(_H200_SHEET, bf16=(989.5, "TFLOP/s"), fp8=(1979, "TFLOP/s"), tf32=(494.5, "TFLOP/s"),
                 fp32=(67, "TFLOP/s"), hbm=(4.8, "TB/s")),
    "B200": _gpu(_HGX_B200, bf16=(2250, "TFLOP/s"), fp8=(4500, "TFLOP/s"), fp4=(9000, "TFLOP/s"),
                 tf32=(1125, "TFLOP/s"), fp32=(75, "TFLOP/s"), hbm=(8.0, "TB/s")),
    "GB200": _gpu(_GB200, bf16=(2500, "TFLOP/s"), fp8=(5000, "TFLOP/s"), fp4=(10000, "TFLOP/s"),
                  tf32=(1250, "TFLOP/s"), fp32=(80, "TFLOP/s"), hbm=(8.0, "TB/s")),
    # A second GB200 power configuration, as tabulated by a third party from NVIDIA material.
    "GB200-1200W": _gpu("GB200 at 1,200 W as tabulated from NVIDIA material by glennklockwood.com "
                        "(garden/processors/B200); secondary source", bf16=(2500, "TFLOP/s"), fp32=(90, "TFLOP/s")),
}


def rate(gpu: str, key: str) -> Rate:
    """One datasheet rate, e.g. rate("GB200", "bf16")."""
    try:
        return SHEETS[gpu][key]
    except KeyError:
        raise KeyError(f"no datasheet rate {key!r} for {gpu!r}") from None


def cite(gpu: str, key: str) -> str:
    r = rate(gpu, key)
    return f"{gpu} {key} {r.value:g} {r.unit}: {r.source}"


# Block-scaled formats: elements per scale block and scale bits, with the defining document.
FORMATS: dict[str, tuple[int, int, str]] = {
    "NVFP4": (16, 8, "NVIDIA technical blog, 'Introducing NVFP4 for Efficient and Accurate Low-Precision "
                     "Inference' (2025): 16-value micro-blocks, FP8 E4M3 scale"),
    "MXFP4": (32, 8, "OCP Microscaling Formats (MX) Specification v1.0 (2023): 32-element blocks, E8M0 scale"),
    "MXFP8": (32, 8, "OCP Microscaling Formats (MX) Specification v1.0 (2023): 32-element blocks, E8M0 scale"),
}

# Every GPU with a datasheet here, by tensor-core generation, oldest first (the secondary GB200
# tabulation left out: its bf16 rate is NVIDIA's GB200 figure again).
GENERATIONS = (("Ampere", ("A100-40GB", "A100-80GB")), ("Hopper", ("H100", "H200")), ("Blackwell", ("B200", "GB200")))
