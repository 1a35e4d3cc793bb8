"""Correct first: check an implementation against the oracle on fresh seeds with poisoned output."""
from __future__ import annotations

from dataclasses import dataclass, field

from suite.spec import resolve


def rel_err(out, ref) -> float:
    """||out - ref||_F / ||ref||_F in float64; inf if out holds NaN/inf where ref is finite."""
    import torch

    o, r = out.double(), ref.double()
    if not torch.isfinite(o).all():
        return float("inf")
    denom = torch.linalg.vector_norm(r).item()
    num = torch.linalg.vector_norm(o - r).item()
    return num / denom if denom > 0 else num


@dataclass
class Verdict:
    ok: bool
    errors: list[float] = field(default_factory=list)
    lowp_errors: list[float] = field(default_factory=list)
    tolerance: float = 0.0
    message: str | None = None


class ReferenceCache:
    """fp64 oracle outputs and low-precision errors per (technique, case, seed, accuracy class)."""

    def __init__(self) -> None:
        self._key: tuple | None = None
        self._refs: dict = {}

    def get(self, key: tuple, compute):
        scope = key[:2]
        if scope != self._key:  # keep one case's references at a time (GPU memory)
            self._key, self._refs = scope, {}
        if key not in self._refs:
            self._refs[key] = compute()
        return self._refs[key]


def judge(tech, impl, out, ref, lowp_err: float | None, label: str) -> tuple[bool, float, float, str | None]:
    """One output against its reference under impl's accuracy class: (ok, error, tolerance, message).
    lowp_err: the class's low-precision error on these inputs (None for an elementwise class)."""
    import torch

    tol = tech.tolerances[impl.accuracy]
    if out.shape != ref.shape:  # an implementation may hand back its own tensor (Tensor.set_)
        return False, float("inf"), 0.0, f"{label}: output shape {tuple(out.shape)} != expected {tuple(ref.shape)}"
    if tol.atol is not None:
        got, want = out.double(), ref.double()
        if torch.isnan(got).any() and not torch.isnan(want).any():
            n = int(torch.isnan(got).sum())
            return False, float("inf"), tol.atol, f"{label}: {n} of {out.numel()} outputs NaN (unwritten or invalid)"
        err = float((got - want).abs().max()) if got.numel() else 0.0
        if not torch.allclose(got, want, atol=tol.atol, rtol=tol.rtol, equal_nan=True):
            return False, err, tol.atol, f"{label}: max abs error {err:.3g} outside atol={tol.atol:g}, rtol={tol.rtol:g}"
        return True, err, tol.atol, None
    err = rel_err(out, ref)
    bound = tol.k * lowp_err + tol.floor
    if torch.isnan(out).any():
        n = int(torch.isnan(out).sum())
        return False, err, bound, f"{label}: {n} of {out.numel()} outputs NaN (unwritten or invalid)"
    if not err <= bound:
        return False, err, bound, (f"{label}: rel_err {err:.3e} > tolerance {bound:.3e} "
                                   f"({tol.k:g} x {impl.accuracy} low-precision error {lowp_err:.3e})")
    return True, err, bound, None


def check(tech, impl, case, fn, device: str, seeds: list[int], cache: ReferenceCache) -> Verdict:
    """Run fn on fresh inputs per seed into a NaN-poisoned buffer and judge it against the oracle."""
    import torch  # lazily: importing the runner does not start torch

    make_inputs, reference = resolve(tech.make_inputs), resolve(tech.reference)
    empty_output = resolve(tech.empty_output)
    tol = tech.tolerances[impl.accuracy]
    elementwise = tol.atol is not None
    v = Verdict(ok=True, tolerance=tol.atol if elementwise else 0.0)
    for seed in seeds:
        ref = cache.get((tech.name, case.id, seed, "ref"),
                        lambda: reference(**make_inputs(case.params, seed, device)))
        lowp_err = None if elementwise else cache.get(
            (tech.name, case.id, seed, impl.accuracy),
            lambda: rel_err(resolve(tol.lowp)(**make_inputs(case.params, seed, device)), ref))
        out = empty_output(case.params, device)
        out.fill_(float("nan"))
        fn(out, **make_inputs(case.params, seed, device))
        if device == "cuda":
            torch.cuda.synchronize()
        ok, err, bound, msg = judge(tech, impl, out, ref, lowp_err, f"seed {seed}")
        if not elementwise:
            v.lowp_errors.append(lowp_err)
            v.tolerance = max(v.tolerance, bound)
        if err != float("inf") or not elementwise:
            v.errors.append(err)
        if not ok:
            v.ok, v.message = False, msg
            break
    return v
