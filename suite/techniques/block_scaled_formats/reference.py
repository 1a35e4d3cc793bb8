"""Oracle, inputs, and each format's quantize-dequantize per its specification in fp64, rounding by
nearest value on an enumerated grid (ties to the even code): independent of the torch-dtype path.
Steps the specifications compute in fp32 (NVFP4's scales) are rounded to fp32 here too."""
from __future__ import annotations

import torch

from suite.techniques.block_scaled_formats.formats import (E2M1_MAX, E4M3_MAX, E8M0_MAX, E8M0_MIN, EMAX_E2M1,
                                                           EMAX_INT4, FORMATS, INT4_MAX)

E2M1_GRID = torch.tensor([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0], dtype=torch.float64)
INT4_GRID = torch.arange(INT4_MAX + 1, dtype=torch.float64)
# E4M3 (fn): subnormals m/8 x 2^-6, normals (1 + m/8) x 2^(e-7) for e = 1..15, the top code (448+) NaN.
E4M3_GRID = torch.tensor([m / 8 * 2.0 ** -6 for m in range(8)]
                         + [(1 + m / 8) * 2.0 ** (e - 7) for e in range(1, 16) for m in range(8)][:-1],
                         dtype=torch.float64)


def make_inputs(params: dict, seed: int, device: str) -> dict[str, torch.Tensor]:
    """x (rows, cols) fp32: Gaussian, Student-t (df) or Gaussian with outlier channels (columns, the
    GEMM's K, scaled by outlier_scale); weights have std 0.02, activations 1."""
    g = torch.Generator(device=device).manual_seed(seed)
    r, c = params["rows"], params["cols"]
    x = torch.randn(r, c, generator=g, device=device, dtype=torch.float64)
    if params["dist"] == "student_t":  # z / sqrt(chi2_df / df), chi2 from df squared normals
        df = params.get("df", 3)
        chi2 = torch.randn(df, r, c, generator=g, device=device, dtype=torch.float64).square().sum(0)
        x = x / (chi2 / df).sqrt()
    elif params["dist"] == "outlier":
        cols = torch.randperm(c, generator=g, device=device)[: max(1, int(c * params["outlier_frac"]))]
        x[:, cols] *= params["outlier_scale"]
    std = 0.02 if params["role"] == "weight" else 1.0
    return {"x": (std * x).float()}


def outlier_columns(params: dict, seed: int, device: str) -> torch.Tensor:
    """Bool (cols,) mask of the outlier channels make_inputs scaled (all False for other dists)."""
    mask = torch.zeros(params["cols"], dtype=torch.bool, device=device)
    if params["dist"] == "outlier":
        g = torch.Generator(device=device).manual_seed(seed)
        torch.randn(params["rows"], params["cols"], generator=g, device=device, dtype=torch.float64)
        c = params["cols"]
        mask[torch.randperm(c, generator=g, device=device)[: max(1, int(c * params["outlier_frac"]))]] = True
    return mask


def empty_output(params: dict, device: str) -> torch.Tensor:
    """Uninitialised (rows, cols) fp32 dequantized tensor."""
    return torch.empty(params["rows"], params["cols"], device=device, dtype=torch.float32)


def reference(x: torch.Tensor) -> torch.Tensor:
    """The tensor itself in fp64: quantization error is the distance from it."""
    return x.double()


def nearest(v: torch.Tensor, grid: torch.Tensor, top: float) -> torch.Tensor:
    """Nearest value of the symmetric grid (+-grid, ascending, grid[-1] = top) to v, ties to the even
    code (grid index), magnitudes above top saturating to it."""
    a = v.abs().clamp(max=top)
    grid = grid.to(v.device)
    hi = torch.bucketize(a, grid).clamp(1, len(grid) - 1)
    lo = hi - 1
    d_lo, d_hi = a - grid[lo], grid[hi] - a
    pick = torch.where((d_hi < d_lo) | ((d_hi == d_lo) & (hi % 2 == 0)), hi, lo)
    return torch.copysign(grid[pick], v)


def _blocks(x: torch.Tensor, block: int) -> torch.Tensor:
    """(R, C) -> (R, C/b, b) view with b = block, the whole row (0), or the whole tensor (-1)."""
    r, c = x.shape
    b = {0: c, -1: r * c}.get(block, block)
    return x.reshape(1, 1, -1) if block == -1 else x.reshape(r, c // b, b)


def _f32(t: torch.Tensor) -> torch.Tensor:
    return t.float().double()


def _pow2_scale(amax: torch.Tensor, emax: int) -> torch.Tensor:
    """2^(floor(log2 amax) - emax), exponent clamped to E8M0's range; a zero block gets 2^-127."""
    e = torch.frexp(amax)[1].double() - 1  # amax = m 2^E with m in [0.5, 1): floor(log2) = E - 1
    e = torch.where(amax > 0, e - emax, float(E8M0_MIN)).clamp(E8M0_MIN, E8M0_MAX)
    return torch.exp2(e)


def spec_qdq(x: torch.Tensor, name: str) -> torch.Tensor:
    """Quantize-dequantize x (R, C) in format `name` per its specification: (R, C) float64."""
    fmt = FORMATS[name]
    xb = _blocks(x.double(), fmt.block)
    amax = xb.abs().amax(-1, keepdim=True)
    if fmt.scale == "e4m3+fp32":  # NVFP4: block scale in E4M3 relative to an fp32 tensor scale
        s_tensor = _f32(amax.amax() / (E2M1_MAX * E4M3_MAX))
        if s_tensor == 0:
            return torch.zeros_like(x, dtype=torch.float64)
        d = nearest(_f32(amax / _f32(E2M1_MAX * s_tensor)), E4M3_GRID, E4M3_MAX)
        s = _f32(d * s_tensor)
    elif fmt.scale == "e8m0":
        s = _pow2_scale(amax, EMAX_E2M1 if fmt.element == "e2m1" else EMAX_INT4)
    else:
        top = {"int4": INT4_MAX, "e4m3": E4M3_MAX}[fmt.element]
        s = _f32(amax / top)
        s = s.half().double() if fmt.scale == "fp16" else s
    v = _f32(torch.where(s > 0, xb / torch.where(s > 0, s, 1.0), 0.0))  # the division is fp32
    grid, top = {"int4": (INT4_GRID, INT4_MAX), "e2m1": (E2M1_GRID, E2M1_MAX),
                 "e4m3": (E4M3_GRID, E4M3_MAX)}[fmt.element]
    return _f32(nearest(v, grid, top) * s).reshape(x.shape)  # decoded in fp32


def _lowp(name: str):
    def lowp(x: torch.Tensor) -> torch.Tensor:
        return spec_qdq(x, name)
    lowp.__doc__ = f"{name} quantize-dequantize per its specification, (R, C) float64."
    return lowp


# One plain run per format ("module:function" targets for the tolerance classes).
for _name in FORMATS:
    globals()[f"lowp_{_name}"] = _lowp(_name)
