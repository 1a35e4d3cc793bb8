"""Conditional correctness (the technique's probe): one implementation's error over a grid of
operand exponents, on matrices with a wide exponent spread, on denormal/flush-to-zero probes, and
on the input class that separates BF16x6 from BF16x9 (cliff.py)."""
from __future__ import annotations

import torch

from suite.techniques.gemm_fp32_emulation.cliff import CLIFF, cliff_inputs
from suite.techniques.gemm_fp32_emulation.reference import lowp_fp32, make_inputs, reference

# Exponent offsets of A and of B (every element of an operand is +-[1, 2) * 2**offset).
GRIDS = {
    "smoke": (-140, -120, -110, 0, 111, 127),
    "coarse": (-140, -133, -126, -118, -112, -110, -64, 0, 64, 111, 120, 126, 127),
    "fine": tuple(range(-140, 127, 6)) + (127,),
}
# Elementwise exponent spreads: each element scaled by 2**U{-s..s}.
SPREADS = {"smoke": (0, 32, 64), "coarse": (0, 16, 32, 48, 64, 96), "fine": tuple(range(0, 121, 8))}
# The BF16x6 cliff (cliff.py): one-signed mid/lo pieces under cancellation, 64 x 64 outputs, at these K.
CLIFF_KS = {"smoke": (256,), "coarse": (256, 1024, 4096), "fine": (256, 1024, 4096)}
K_TOL = 4.0  # "within fp32 accuracy": error <= K_TOL x fp32 IEEE's error, the harness's rule


def _rel(out: torch.Tensor, ref: torch.Tensor) -> float | None:
    """||out - ref|| / ||ref|| in fp64; None if either holds inf/NaN."""
    o, r = out.double(), ref.double()
    if not (torch.isfinite(o).all() and torch.isfinite(r).all()):
        return None
    den = torch.linalg.vector_norm(r).item()
    num = torch.linalg.vector_norm(o - r).item()
    if den == 0.0:
        return 0.0 if num == 0.0 else 1.0
    return num / den


def point_errors(fn, params: dict, seed: int, device: str) -> dict:
    """Errors of fn at one input setting: vs the fp64 oracle, vs fp32 IEEE, and fp32 IEEE's own."""
    make = cliff_inputs if params.get("dist") == "cliff" else make_inputs
    inputs = make(params, seed, device)
    ref, ieee = reference(**inputs), lowp_fp32(**inputs)
    out = torch.full((params["m"], params["n"]), float("nan"), device=device)
    fn(out, **inputs)
    err, ieee_err = _rel(out, ref), _rel(ieee, ref)
    if err is None or ieee_err is None:
        within = err is None and ieee_err is None  # both non-finite: fp32 overflows here too
    else:
        within = err <= K_TOL * ieee_err + 1e-12
    return {"rel_err": err, "rel_err_vs_fp32": _rel(out, ieee), "ieee_rel_err": ieee_err,
            "within_fp32": float(within), "nonfinite": int((~torch.isfinite(out)).sum())}


def _rows(case_id: str, params: dict, e: dict) -> list[dict]:
    rows = []
    for metric, unit, direction in (("rel_err", "1", "lower"), ("rel_err_vs_fp32", "1", "lower"),
                                    ("within_fp32", "bool", "higher")):
        row = {"metric": metric, "unit": unit, "direction": direction, "value": e[metric],
               "case": case_id, "params": params,
               "stats": {"ieee_rel_err": e["ieee_rel_err"], "nonfinite_outputs": e["nonfinite"],
                         "k_tol": K_TOL}}
        if e[metric] is None:
            row.update(status="failed_correctness",
                       error=f"non-finite output or reference ({e['nonfinite']} outputs inf/NaN)")
        rows.append(row)
    return rows


def grid_id(ea: int, eb: int) -> str:
    """Stable case id of one grid point, e.g. sweep_ea-110_eb+64."""
    return f"sweep_ea{ea:+d}_eb{eb:+d}"


def _denormal_inputs(name: str, n: int, device: str, seed: int):
    """Small probes: fp32 denormal inputs, a denormal result, a bf16-denormal piece."""
    g = torch.Generator(device=device).manual_seed(seed)
    u = lambda shape: torch.rand(shape, generator=g, device=device) + 1.0  # [1, 2)
    if name == "denorm_input":  # A is an fp32 denormal (2**-130); products are normal (2**-110)
        return torch.full((n, n), 2.0 ** -130, device=device), u((n, n)) * 2.0 ** 20
    if name == "denorm_output":  # normal inputs whose products and sums are fp32 denormals
        return u((n, n)) * 2.0 ** -70, u((n, n)) * 2.0 ** -70
    # denorm_piece: A = (1 + 2**-12) * 2**-118 is a normal fp32, its second bf16 piece 2**-130 is
    # a bf16 denormal; flushing that piece costs 2**-12 of relative error.
    return torch.full((n, n), (1 + 2.0 ** -12) * 2.0 ** -118, device=device), u((n, n)) * 2.0 ** 20


def _denormal_rows(fn, device: str, seed: int) -> list[dict]:
    rows = []
    for name in ("denorm_input", "denorm_output", "denorm_piece"):
        a, b = _denormal_inputs(name, 32, device, seed)
        out = torch.full((32, 32), float("nan"), device=device)
        fn(out, a=a, b=b)
        ref, ieee = reference(a, b), lowp_fp32(a, b)
        e = {"rel_err": _rel(out, ref), "rel_err_vs_fp32": _rel(out, ieee),
             "ieee_rel_err": _rel(ieee, ref), "nonfinite": int((~torch.isfinite(out)).sum())}
        e["within_fp32"] = float(e["rel_err"] is not None and e["ieee_rel_err"] is not None
                                 and e["rel_err"] <= K_TOL * e["ieee_rel_err"] + 1e-12)
        zeros = int((out == 0).sum())
        for row in _rows(name, {"m": 32, "n": 32, "k": 32, "probe": name}, e):
            row["stats"]["zero_outputs"] = zeros
            rows.append(row)
    return rows


def probe(fn, case, device: str, seed: int) -> list[dict]:
    """Rows for the runner: the exponent grid, the spreads, the cliff class and the denormal probes
    of one impl."""
    grid = case.params.get("sweep")
    if not grid:
        return []
    base = {k: case.params[k] for k in ("m", "n", "k")}
    rows = []
    for ea in GRIDS[grid]:
        for eb in GRIDS[grid]:
            params = dict(base, dist="unit_exp", exp_a=ea, exp_b=eb)
            rows += _rows(grid_id(ea, eb), params, point_errors(fn, params, seed, device))
    for s in SPREADS[grid]:
        params = dict(base, dist="normal", spread=s)
        rows += _rows(f"spread_s{s}", params, point_errors(fn, params, seed, device))
    for k in CLIFF_KS[grid]:
        params = dict(CLIFF, m=64, n=64, k=k, dist="cliff")
        rows += _rows(f"cliff_k{k}", params, point_errors(fn, params, seed, device))
    return rows + _denormal_rows(fn, device, seed)


def region(rows: list[dict], impl: str) -> dict:
    """Where `impl` stays within fp32 accuracy, from result rows of the grid (within_fp32 metric):
    the range of exp_a with exp_b = 0 (and of exp_b with exp_a = 0), and the widest square
    [lo, hi] x [lo, hi] around 0 holding only valid grid points."""
    ok = {(r["params"]["exp_a"], r["params"]["exp_b"]): r["value"] == 1.0 for r in rows
          if r["impl"] == impl and r["metric"] == "within_fp32" and r["case"].startswith("sweep_ea")}
    if not ok:
        return {}
    exps = sorted({ea for ea, _ in ok})

    def run_around_zero(valid) -> tuple[int, int] | None:
        if 0 not in exps or not valid(0):
            return None
        i = j = exps.index(0)
        while i > 0 and valid(exps[i - 1]):
            i -= 1
        while j < len(exps) - 1 and valid(exps[j + 1]):
            j += 1
        return exps[i], exps[j]

    boxes = [(lo, hi) for lo in exps if lo <= 0 for hi in exps if hi >= 0
             if all(ok.get((x, y), False) for x in exps for y in exps if lo <= x <= hi and lo <= y <= hi)]
    box = max(boxes, key=lambda lh: (lh[1] - lh[0], lh[1]), default=None)
    return {"exp_a_with_b0": run_around_zero(lambda e: ok.get((e, 0), False)),
            "exp_b_with_a0": run_around_zero(lambda e: ok.get((0, e), False)),
            "square_box": box, "valid_points": sum(ok.values()), "points": len(ok)}
