"""Accuracy probe: ULP and relative error of an exp2 variant over every fp32 x in [-126, 0] (or a
strided subset), and on a dense uniform grid; bf16 agreement with hardware exp2 and with the oracle.

ULP error = distance, in representable fp32 values, from the correctly rounded fp32 of fp64 exp2.
The domain stops at -126 so that every true result is a normal fp32; below it MUFU (ftz) flushes
to 0 and the polynomial's exponent add yields some value below 2**-126 (docs/numerics_exp.md).
"""
from __future__ import annotations

import torch

HIST = 1 << 22  # ULP errors are histogrammed exactly up to this, clamped above
SMALL = 64
TOP = 0x42FC0000  # bit pattern of 126.0


def _hardware_exp2(x: torch.Tensor) -> torch.Tensor:
    from suite.techniques.exp_approx.common import launch

    out = torch.empty_like(x)
    launch(out, x, "sum", 1, 0.0, 0, 0)
    return out


class _Stats:
    def __init__(self, device: str) -> None:
        self.hist = torch.zeros(HIST + 1, dtype=torch.int64, device=device)
        self.rel_max, self.n, self.same_hw, self.same_ref = 0.0, 0, 0, 0

    def add(self, fn, x: torch.Tensor) -> None:
        y = torch.full_like(x, float("nan"))
        fn(y, x=x, kind="sum", terms=1, delta=0.0)
        ref64 = torch.exp2(x.double())
        ref32 = ref64.float()
        ulp = (y.view(torch.int32).long() - ref32.view(torch.int32).long()).abs()
        ulp = torch.where(torch.isnan(y), HIST, ulp.clamp_max(HIST))
        # Small errors (most of them) in a small histogram: shared-memory bincount, no contention.
        self.hist[:SMALL + 1] += torch.bincount(ulp.clamp_max(SMALL), minlength=SMALL + 1)
        big = ulp[ulp > SMALL]
        if big.numel():
            self.hist += torch.bincount(big, minlength=HIST + 1)
            self.hist[SMALL] -= big.numel()
        rel = ((y.double() - ref64).abs() / ref64).nan_to_num(nan=float("inf"))
        self.rel_max = max(self.rel_max, rel.max().item())
        yb = y.to(torch.bfloat16).view(torch.int16)
        self.same_hw += (yb == _hardware_exp2(x).to(torch.bfloat16).view(torch.int16)).sum().item()
        self.same_ref += (yb == ref32.to(torch.bfloat16).view(torch.int16)).sum().item()
        self.n += x.numel()

    def rows(self, sampling: str, note: str) -> list[dict]:
        cdf = torch.cumsum(self.hist, 0)
        q = lambda p: int(torch.searchsorted(cdf, torch.tensor(p * self.n, device=cdf.device)).item())
        nz = torch.nonzero(self.hist)
        ulp_max = int(nz.max().item()) if nz.numel() else 0
        mean = (self.hist.double() * torch.arange(HIST + 1, device=cdf.device)).sum().item() / self.n
        params = {"sampling": sampling, "points": self.n, "domain": "[-126, 0]"}
        vals = [("ulp_max", "ulp", "lower", ulp_max), ("ulp_p99", "ulp", "lower", q(0.99)),
                ("ulp_p50", "ulp", "lower", q(0.50)), ("ulp_mean", "ulp", "lower", mean),
                ("rel_err_max", "1", "lower", self.rel_max),
                ("bf16_identical_frac", "1", "higher", self.same_hw / self.n),
                ("bf16_correct_frac", "1", "higher", self.same_ref / self.n)]
        counts = {"bf16_identical_frac": self.same_hw, "bf16_correct_frac": self.same_ref}  # k of n points
        return [{"metric": m, "unit": u, "direction": d, "value": v, "params": params,
                 "stats": {"note": note, "ulp_clamp": HIST,
                           **({"k": counts[m], "n": self.n} if m in counts else {})}} for m, u, d, v in vals]


def probe(fn, case, device: str, seed: int) -> list[dict]:
    """Accuracy rows for cases with params["accuracy"]; nothing for the others."""
    p = case.params
    if not p.get("accuracy"):
        return []
    stride, chunk = p["stride"], 1 << 26
    every = _Stats(device)
    for start in range(0, TOP + 1, chunk * stride):
        bits = torch.arange(start, min(start + chunk * stride, TOP + 1), stride, dtype=torch.int32,
                            device=device)
        every.add(fn, bits.view(torch.float32).neg())
    uniform = _Stats(device)
    n = p["uniform_points"]
    for lo in range(0, n, chunk):
        i = torch.arange(lo, min(lo + chunk, n), device=device, dtype=torch.float64)
        uniform.add(fn, (-126.0 * (i + 0.5) / n).float())
    hw = "hardware exp2 = Triton tl.math.exp2" + (" (numpy under the interpreter)" if device == "cpu" else "")
    rows = (every.rows("every fp32" if stride == 1 else f"every {stride}th fp32 bit pattern", hw)
            + uniform.rows("uniform grid", hw))
    for r in rows:  # one series per sampling: stable case ids
        r["case"] = f"{case.id}/{'all_fp32' if r in rows[:len(rows) // 2] else 'uniform'}"
    return rows
