"""Inputs that separate BF16x6 from BF16x9: shaped bf16 pieces (hi, mid, lo) per fp32 element.

BF16x6 drops mid*lo, lo*mid and lo*lo. Each dropped term is at most 2^-25 |a_k b_k| (plus 2^-34), so
random data hides it under fp32's own rounding; it shows when the dropped terms share one sign over
a long K while fp32's rounding errors do not (docs/numerics_gemm.md, "The BF16x6 cliff").
"""
from __future__ import annotations

import torch

# The class that fails the 4x-FP32 rule for BF16x6 and not for BF16x9 (search: runners/studies/bf16x6_cliff.py).
CLIFF = {"cancel": 1.0, "bias": 1.0, "mfrac": 1.0, "lfrac": 1.0, "spread": 0, "exp": 0}


def _operand(shape, p: dict, exp: int, g: torch.Generator, device: str) -> tuple[torch.Tensor, torch.Tensor]:
    """(x, hi) fp32 of `shape`: x = hi + mid + lo with the mid and lo pieces shaped by p."""
    rnd = lambda: torch.rand(shape, generator=g, device=device, dtype=torch.float64)
    e = torch.zeros(shape, device=device, dtype=torch.float64) + exp
    if p.get("spread", 0):
        e += torch.randint(-p["spread"], p["spread"] + 1, shape, generator=g, device=device)
    # hi: a bf16 value +-(1 + j/128) 2^e, j >= 1 so rounding x never crosses a power of two.
    j = torch.randint(1, 128, shape, generator=g, device=device).double()
    hi = torch.where(rnd() < 0.5, -1.0, 1.0) * (1 + j / 128) * torch.exp2(e)
    # Signs of mid and lo: + with probability (1 + bias) / 2, whatever the sign of hi.
    sign = lambda: torch.where(rnd() < (1 + p.get("bias", 0.0)) / 2, 1.0, -1.0)
    # mid below half an ulp of hi (2^(e-8)), on 8 bits from 2^(e-16); lo below half an ulp of mid
    # (2^(e-17)), on the bits fp32 keeps (from 2^(e-23)): the split gives back exactly these pieces.
    size = lambda frac, bits: torch.round(frac * (0.5 + 0.49 * rnd()) * 2.0 ** bits).clamp(min=1)
    mid = sign() * size(p.get("mfrac", 1.0), 8) * torch.exp2(e - 16)
    lo = sign() * size(p.get("lfrac", 1.0), 6) * torch.exp2(e - 23)
    return (hi + mid + lo).float(), hi


def cliff_inputs(params: dict, seed: int, device: str) -> dict[str, torch.Tensor]:
    """a (m,k), b (k,n) fp32 with shaped pieces; a fraction `cancel` of the K pairs (2j, 2j+1)
    cancel their leading pieces: a's columns repeat, b's hi piece is negated, fresh mid/lo kept.

    params: m, n, k; cancel, bias in [0, 1]; mfrac, lfrac in (0, 1] (piece size as a fraction of
    its largest); spread (per-element exponent spread 2^U{-s..s}); exp (exponent offset of a, as the sweep's exp_a)."""
    g = torch.Generator(device=device).manual_seed(seed)
    m, n, k = params["m"], params["n"], params["k"]
    a, _ = _operand((m, k), params, params.get("exp", 0), g, device)
    b, b_hi = _operand((k, n), params, 0, g, device)
    pairs = k // 2
    if pairs and params.get("cancel", 0.0) > 0:
        on = torch.rand(pairs, generator=g, device=device) < params["cancel"]
        even, odd = torch.arange(0, 2 * pairs, 2, device=device)[on], torch.arange(1, 2 * pairs, 2, device=device)[on]
        a[:, odd] = a[:, even]
        # b's odd row: -hi of the even row plus that row's own mid and lo (same sign rule).
        b[odd] = (b[odd].double() - b_hi[odd] - b_hi[even]).float()
    return {"a": a, "b": b}
