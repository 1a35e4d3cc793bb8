"""The formats compared, as data: element type, elements per scale, scale type, and storage bits per
element with every scale charged (block scales, and a per-tensor fp32 scale over the whole tensor)."""
from __future__ import annotations

from dataclasses import dataclass

# Each format's defining document (blocks run along the last dimension, the GEMM's K).
MX_SPEC = "OCP Microscaling Formats (MX) Specification v1.0 (2023): E2M1 elements, 32 per E8M0 scale"
NVFP4_SPEC = ("NVIDIA, 'Introducing NVFP4 for Efficient and Accurate Low-Precision Inference' (2025): "
              "E2M1 elements, 16 per E4M3 scale, plus an fp32 per-tensor scale")


@dataclass(frozen=True)
class Format:
    name: str
    element: str  # "int4" (symmetric -7..7), "e2m1", "e4m3"
    block: int  # elements per scale along the last dimension; 0: the whole row; -1: the whole tensor
    scale: str  # "fp32", "fp16", "e8m0" (a power of two), "e4m3+fp32" (block E4M3 x tensor fp32)
    source: str = ""

    def bits(self, rows: int, cols: int) -> float:
        """Storage bits per element, scales included."""
        elem = 8 if self.element == "e4m3" else 4
        scale_bits = {"fp32": 32, "fp16": 16, "e8m0": 8, "e4m3+fp32": 8}[self.scale]
        per_scale = {-1: rows * cols, 0: cols}.get(self.block, self.block)
        tensor = 32 / (rows * cols) if self.scale == "e4m3+fp32" else 0.0
        return elem + scale_bits / per_scale + tensor


FORMATS = {f.name: f for f in (
    Format("int4_tensor", "int4", -1, "fp32", "one fp32 scale amax/7 for the tensor"),
    Format("int4_channel", "int4", 0, "fp16", "one fp16 scale amax/7 per row (output channel or token)"),
    Format("int4_block128", "int4", 128, "fp16", "GPTQ/AWQ-style groups of 128"),
    Format("int4_block32", "int4", 32, "fp16", "groups of 32"),
    Format("bfp4_block32", "int4", 32, "e8m0", "block floating point: a shared exponent, 4-bit integer mantissas"),
    Format("mxfp4", "e2m1", 32, "e8m0", MX_SPEC),
    Format("nvfp4", "e2m1", 16, "e4m3+fp32", NVFP4_SPEC),
    Format("fp8_e4m3_tensor", "e4m3", -1, "fp32", "FP8 E4M3 with one fp32 scale amax/448 (the FP8 baseline)"),
)}

E2M1_MAX, E4M3_MAX, INT4_MAX = 6.0, 448.0, 7
EMAX_E2M1 = 2  # exponent of E2M1's largest normal (6 = 1.5 x 2^2): the MX scale is 2^(floor(log2 amax) - 2)
EMAX_INT4 = 2  # 4-bit integer mantissas 1.2 in fixed point: the BFP scale is 2^(floor(log2 amax) - 2)
E8M0_MIN, E8M0_MAX = -127, 127  # exponent range of an E8M0 scale (0xFF is NaN)
