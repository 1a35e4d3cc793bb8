"""Oracle and inputs for FP32 GEMM: fp64 product, and plain runs of each emulation scheme."""
from __future__ import annotations

import torch

from suite.lib.planes import fp32_precision, round_tf32, split


def make_inputs(params: dict, seed: int, device: str) -> dict[str, torch.Tensor]:
    """a (m,k) and b (k,n) fp32 normal, scaled by 2**exp_a and 2**exp_b (default 0).

    With params["dist"] == "unit_exp" every element is +-[1, 2) * 2**exp (one exponent per operand,
    so exp up to 127 stays finite); params["spread"] = s multiplies each element by 2**U{-s..s}."""
    g = torch.Generator(device=device).manual_seed(seed)
    m, n, k = params["m"], params["n"], params["k"]
    ops = {}
    for name, shape, exp in (("a", (m, k), params.get("exp_a", 0)), ("b", (k, n), params.get("exp_b", 0))):
        if params.get("dist") == "unit_exp":
            x = torch.rand(shape, generator=g, device=device, dtype=torch.float32) + 1.0
            sign = torch.randint(0, 2, shape, generator=g, device=device, dtype=torch.int8)
            x = torch.where(sign == 1, -x, x)
        else:
            x = torch.randn(shape, generator=g, device=device, dtype=torch.float32)
        spread = params.get("spread", 0)
        if spread:
            e = torch.randint(-spread, spread + 1, shape, generator=g, device=device)
            x = torch.ldexp(x, e.to(torch.float32))
        ops[name] = _scale(x, exp)
    return ops


def _scale(x: torch.Tensor, exp: int) -> torch.Tensor:
    # Two steps so 2**exp itself never leaves the fp32 range (exp down to -149, up to 127).
    half = exp // 2
    return x.mul_(2.0 ** half).mul_(2.0 ** (exp - half))


def empty_output(params: dict, device: str) -> torch.Tensor:
    """Uninitialised (m,n) fp32 output."""
    return torch.empty(params["m"], params["n"], device=device, dtype=torch.float32)


def reference(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """fp64 a @ b: the oracle, (m,n) float64."""
    return a.double() @ b.double()


def _ieee(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    with fp32_precision("ieee"):
        return a @ b


def _pairwise(pa: list[torch.Tensor], pb: list[torch.Tensor], pairs) -> torch.Tensor:
    # Smallest products first, so the big ones are not swamped by accumulation order.
    acc = torch.zeros(pa[0].shape[0], pb[0].shape[1], device=pa[0].device)
    for i, j in sorted(pairs, key=lambda ij: -(ij[0] + ij[1])):
        acc += _ieee(pa[i], pb[j])
    return acc


def lowp_fp32(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Plain fp32 IEEE GEMM (m,n) float32."""
    return _ieee(a, b)


def lowp_tf32(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Operands rounded to tf32, then fp32 GEMM (m,n) float32."""
    return _ieee(round_tf32(a), round_tf32(b))


def lowp_tf32x3(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """tf32 hi/lo split, hi*hi + hi*lo + lo*hi in fp32 (m,n) float32."""
    pa, pb = split(a, 2, round_tf32), split(b, 2, round_tf32)
    return _pairwise(pa, pb, [(0, 0), (0, 1), (1, 0)])


def lowp_bf16x3(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """bf16 hi/lo split, hi*hi + hi*lo + lo*hi in fp32 (m,n) float32."""
    pa, pb = split(a, 2), split(b, 2)
    return _pairwise(pa, pb, [(0, 0), (0, 1), (1, 0)])


def lowp_bf16x6(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """bf16 hi/mid/lo split, the six products with i+j <= 2, fp32 (m,n) float32."""
    pa, pb = split(a, 3), split(b, 3)
    return _pairwise(pa, pb, [(0, 0), (0, 1), (1, 0), (0, 2), (2, 0), (1, 1)])


def lowp_bf16x9(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """bf16 hi/mid/lo split, all nine products, fp32 (m,n) float32."""
    pa, pb = split(a, 3), split(b, 3)
    return _pairwise(pa, pb, [(i, j) for i in range(3) for j in range(3)])
