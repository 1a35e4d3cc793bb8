"""The technique spec: plain data describing oracles, implementations, cases and metrics."""
from __future__ import annotations

import functools
import importlib
from dataclasses import dataclass, field
from typing import Any, Callable

# smoke: the quick CPU check (each technique's `smoke` slice of implementations on its smoke cases);
# smoke_full: every implementation on every smoke and smoke_full case; full: every case.
TIERS = ("smoke", "smoke_full", "nightly", "full")
NIGHTLY_BUDGET_S = 600.0  # the nightly tier's wall time on one GPU host (`kwatch estimate` checks it)
DIRECTIONS = ("lower", "higher")


@dataclass(frozen=True)
class Metric:
    """A tracked quantity; its name carries its unit (`latency_ms`, `tflops`, `rel_err`)."""

    name: str
    unit: str
    direction: str  # "lower" or "higher" is better

    def __post_init__(self) -> None:
        if self.direction not in DIRECTIONS:
            raise ValueError(f"metric {self.name}: direction must be one of {DIRECTIONS}")


LATENCY = Metric("latency_ms", "ms", "lower")
TFLOPS = Metric("tflops", "TFLOP/s", "higher")
REL_ERR = Metric("rel_err", "1", "lower")
GBPS = Metric("gbps", "GB/s", "higher")  # a rate: needs Technique.work["gbps"] (bytes per call * 1e-9)
MAX_ABS_ERR = Metric("max_abs_err", "1", "lower")
ERROR_METRICS = ("rel_err", "max_abs_err")  # the check's error, recorded per seed; not timed


@dataclass(frozen=True)
class Tolerance:
    """Accuracy class: error vs the oracle must be <= k * error of `lowp` (a plain low-precision
    run of the same math, "module:function") + floor. Every smoke check's bound is chosen so that a
    correct implementation uses at most half of it on any of 200 seeds drawn like the runner's
    (runners/smoke_calibration.json, kept in step by tests/test_smoke_tolerances.py)."""

    lowp: str
    k: float = 4.0
    floor: float = 1e-12
    # Set: the elementwise rule |out - ref| <= atol + rtol |ref| instead (KernelBench's, whose
    # reference is the problem's own model, not an fp64 oracle); `lowp` is then not run.
    atol: float | None = None
    rtol: float = 0.0


@dataclass(frozen=True)
class Impl:
    """One implementation: `target` is "module:function" called as fn(out, **inputs, **args);
    a variant of a kernel family is the same target with other `args`."""

    name: str
    target: str
    args: dict[str, Any] = field(default_factory=dict, hash=False)
    version: int = 1
    baseline: bool = False
    requires: tuple[str, ...] = ()  # "cuda", "triton", "sm90", ...
    accuracy: str = "default"  # key into Technique.tolerances
    graph: bool | None = None  # CUDA-graph replay: True, False, or None = wherever capturable
    note: str = ""
    # Non-empty: known to fail correctness, kept so the harness shows it catches it (the reason).
    # Its failure does not fail a run or block the gate; its passing would be news.
    expect_failure: str = ""
    # False: a variant kept for the record (slower than a sibling that is tracked, or superseded by it)
    # that runs in the full tier but not in the nightly one, whose time on one GPU is budgeted
    # (`kwatch estimate`); its history continues in full-tier runs.
    nightly: bool = True


@dataclass(frozen=True)
class Case:
    """A problem instance; `id` is stable (renaming it breaks its history)."""

    id: str
    params: dict[str, Any]
    tiers: tuple[str, ...] = ("smoke",)
    seeds: int = 3

    def __post_init__(self) -> None:
        bad = [t for t in self.tiers if t not in TIERS]
        if bad:
            raise ValueError(f"case {self.id}: unknown tiers {bad}")


@dataclass(frozen=True)
class Technique:
    """A page technique: oracle, input maker, implementations, cases and metrics."""

    name: str
    section: str
    reference: str  # "module:function" -> fp64 tensor
    make_inputs: str  # "module:function"(params, seed, device) -> dict of tensors
    empty_output: str  # "module:function"(params, device) -> uninitialised output tensor
    impls: tuple[Impl, ...]
    cases: tuple[Case, ...]
    tolerances: dict[str, Tolerance]
    metrics: tuple[Metric, ...] = (LATENCY, REL_ERR)
    flops: Callable[[dict], float] | None = None
    bytes: Callable[[dict], float] | None = None
    # Rate metrics beyond tflops: metric name -> work per call in the metric's unit times
    # seconds (e.g. 1e-12 * exps for "texp_per_s"); the value is work / median time.
    work: dict[str, Callable[[dict], float]] = field(default_factory=dict)
    probe: str | None = None  # optional "module:function"(impl_fn, case, device) -> extra metrics
    # Optional "module:function"(device) -> GB/s the machine reaches now (e.g. suite.lib.bandwidth:
    # copy_gbps); with `bytes`, each timed job adds a `ceiling_share` row: (bytes / time) / ceiling.
    ceiling: str | None = None
    # Which of the run's measured ceilings (runners/ceilings.py keys) each rate metric is a share of:
    # metric -> key, or a function of the Impl -> key or (key, divisor), e.g. ("bf16_tflops", 9) for
    # an fp32 GEMM emulated with 9 bf16 products. gbps and texp_per_s default to copy and MUFU exp2.
    ceilings: dict[str, Any] = field(default_factory=dict)
    # Rates count the dense problem's work (sparse and structured kernels against the dense GEMM): a
    # share above 100 % of a ceiling is then a speed-up over dense hardware, and is labelled so.
    dense_equivalent: bool = False
    # Its time depends on the input instance (a random sparsity pattern or block selection): a timing
    # difference between two rows timed on different instances cannot be put on the code alone.
    time_depends_on_data: bool = False
    # Where the instance's structure (integer or sparse inputs, or floats derived from them) depends on
    # the seed: the top-level inputs the fresh-value audit (runners/guard_audit.py) may refill with a
    # fresh instance's values while the rest stays as timed. Empty: every dense floating-point input,
    # and the audit only runs where no structure depends on the seed.
    audit_inputs: tuple[str, ...] = ()
    claims: tuple[str, ...] = ()  # claim ids this technique reproduces
    description: str = ""
    smoke: tuple[str, ...] = ()  # implementations of the quick smoke tier (empty: all of them)

    def __post_init__(self) -> None:
        names = [i.name for i in self.impls]
        if len(set(names)) != len(names):
            raise ValueError(f"technique {self.name}: duplicate implementation names")
        ids = [c.id for c in self.cases]
        if len(set(ids)) != len(ids):
            raise ValueError(f"technique {self.name}: duplicate case ids")
        unknown = [n for n in self.smoke if n not in names]
        if unknown:
            raise ValueError(f"technique {self.name}: smoke names unknown implementations {unknown}")
        for m in self.metrics:
            rate = m.name not in ("latency_ms", *ERROR_METRICS)
            if rate and m.name not in self.work and not (m.name == "tflops" and self.flops):
                raise ValueError(f"technique {self.name}: metric {m.name} has no work formula")
        if self.ceiling and not self.bytes:
            raise ValueError(f"technique {self.name}: a ceiling needs a bytes formula")
        for impl in self.impls:
            if impl.accuracy not in self.tolerances:
                raise ValueError(f"{self.name}/{impl.name}: no tolerance class {impl.accuracy!r}")

    def impl(self, name: str) -> Impl:
        for impl in self.impls:
            if impl.name == name:
                return impl
        raise KeyError(f"technique {self.name} has no implementation {name!r}")

    def case(self, case_id: str) -> Case:
        for case in self.cases:
            if case.id == case_id:
                return case
        raise KeyError(f"technique {self.name} has no case {case_id!r}")

    def cases_for(self, tier: str) -> list[Case]:
        """Cases run in `tier`; `full` includes every case, `smoke_full` every smoke case."""
        if tier == "full":
            return list(self.cases)
        wanted = {"smoke", "smoke_full"} if tier == "smoke_full" else {tier}
        return [c for c in self.cases if wanted & set(c.tiers)]

    def impls_for(self, tier: str) -> list[Impl]:
        """Implementations run in `tier`: the `smoke` slice in the smoke tier, those with `nightly` set
        in the nightly tier, else all."""
        if tier == "smoke" and self.smoke:
            return [i for i in self.impls if i.name in self.smoke]
        if tier == "nightly":
            return [i for i in self.impls if i.nightly]
        return list(self.impls)


def implementation(impl: Impl) -> Callable[..., Any]:
    """The callable fn(out, **inputs) an implementation runs: its target with its args bound."""
    fn = resolve(impl.target)
    return functools.partial(fn, **impl.args) if impl.args else fn


def resolve(target: str) -> Callable[..., Any]:
    """Import "package.module:function" lazily and return the function."""
    module_name, _, attr = target.partition(":")
    if not attr:
        raise ValueError(f"target {target!r} is not of the form 'module:function'")
    return getattr(importlib.import_module(module_name), attr)
