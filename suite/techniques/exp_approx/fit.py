"""Fit-time only: minimax polynomials for 2**f on [0, 1) with p(0) = 1, by the Remez exchange.

Run `python -m suite.techniques.exp_approx.fit` to print the coefficients that common.py commits.
The error minimised is the relative one, max |p(f) / 2**f - 1|; p(0) = 1 is imposed so that
x = -127 (the clamp) maps to exactly 0 after the exponent add, and p is continuous across integers
to within its error. Uses numpy only.
"""
from __future__ import annotations

import numpy as np

GRID = np.linspace(0.0, 1.0, 200_001)[1:]


def _rel_err(c: np.ndarray, f: np.ndarray) -> np.ndarray:
    """(p(f) - 2**f) / 2**f in float64 for p(f) = 1 + sum_k c[k-1] f**k."""
    p = np.polynomial.polynomial.polyval(f, np.concatenate([[1.0], c]))
    return p / np.exp2(f) - 1.0


def _alternating_extrema(e: np.ndarray, n: int) -> np.ndarray:
    """Indices of n extrema of e with alternating signs, keeping the largest |e|."""
    sign = np.sign(e)
    cuts = np.flatnonzero(np.diff(sign) != 0) + 1
    segs = np.split(np.arange(e.size), cuts)
    idx = [s[np.argmax(np.abs(e[s]))] for s in segs if sign[s[0]] != 0]
    while len(idx) > n:  # drop the smaller end: keeps alternation
        idx.pop(0 if abs(e[idx[0]]) < abs(e[idx[-1]]) else -1)
    return np.array(idx)


def remez(degree: int, iters: int = 40) -> tuple[np.ndarray, float]:
    """Coefficients c1..c_degree (float64) and the levelled relative error."""
    n = degree + 1  # unknowns: c1..cd and the levelled error E
    pts = 0.5 - 0.5 * np.cos(np.pi * (np.arange(n) + 0.5) / n)  # Chebyshev nodes on (0, 1)
    c = np.zeros(degree)
    for _ in range(iters):
        # sum_k c_k f_i^k - (2^f_i - 1) = (-1)^i E 2^f_i
        a = np.column_stack([pts ** k for k in range(1, degree + 1)] + [-((-1.0) ** np.arange(n)) * np.exp2(pts)])
        sol = np.linalg.solve(a, np.exp2(pts) - 1.0)
        c = sol[:degree]
        e = _rel_err(c, GRID)
        ext = _alternating_extrema(e, n)
        if len(ext) < n:
            break
        new = GRID[ext]
        if np.allclose(new, pts, rtol=0, atol=1e-9):
            break
        pts = new
    return c, float(np.max(np.abs(_rel_err(c, GRID))))


def fp32_coeffs(degree: int) -> tuple[tuple[float, ...], float]:
    """Remez coefficients rounded to fp32, and their max relative error evaluated in float64."""
    c, _ = remez(degree)
    c32 = c.astype(np.float32).astype(np.float64)
    return tuple(float(v) for v in c32), float(np.max(np.abs(_rel_err(c32, GRID))))


if __name__ == "__main__":
    for d in range(1, 6):
        c, err = fp32_coeffs(d)
        print(f"    {d}: ({', '.join(float(np.float32(v)).hex() for v in c)}),  # max rel err {err:.3e}")
