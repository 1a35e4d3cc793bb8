"""Older suite/ specs made usable by the current runners (backfill and A/B of past commits).

Fields and helpers the runners use that a past spec lacks get their neutral value: no bound args, no
expected failure, no extra work formulas, probe or ceiling, every implementation in every tier, no
elementwise tolerance, rel_err the only error metric. Called only in an exported tree (runners.trees
writes the call into that tree's runners/__init__.py).
"""
from __future__ import annotations

import functools


def adapt() -> None:
    """Give suite.spec what the current runners need, where it lacks it (no-op on a current spec)."""
    import suite.spec as spec

    for cls, defaults in ((spec.Impl, {"args": {}, "expect_failure": ""}),
                          (spec.Technique, {"work": {}, "probe": None, "smoke": (), "ceiling": None}),
                          (spec.Tolerance, {"atol": None, "rtol": 0.0})):
        for name, value in defaults.items():
            if not hasattr(cls, name) and name not in getattr(cls, "__dataclass_fields__", {}):
                setattr(cls, name, value)
    if not hasattr(spec, "ERROR_METRICS"):
        spec.ERROR_METRICS = ("rel_err",)
    if not hasattr(spec.Technique, "impls_for"):
        spec.Technique.impls_for = lambda self, tier: list(self.impls)
    if not hasattr(spec, "implementation"):
        def implementation(impl):
            fn = spec.resolve(impl.target)
            return functools.partial(fn, **impl.args) if impl.args else fn

        spec.implementation = implementation
