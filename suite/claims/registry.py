"""Discovery of claims: suite/techniques/<name>/claims*.py and suite/claims/ledger_*.py, each a CLAIMS tuple."""
from __future__ import annotations

import importlib
from pathlib import Path

from suite.claims.spec import Claim

_SUITE = Path(__file__).resolve().parent.parent
# The page's sections in page order: the ledger lists claims in this order (stable within one).
PAGE_ORDER = ("Diagram", "Design — sparse attention", "Morton", "Approximate exponential", "BF16x9",
              "megakernels", "Kernel synthesis", "Prefill", "Native FP4", "Fused epilogues",
              "Thread block clusters", "Normalization", "RoPE", "Component", "Feed-forward", "Quantization granularity", "Example", "Interview")


def page_position(section: str) -> int:
    return next((i for i, key in enumerate(PAGE_ORDER) if key in section), len(PAGE_ORDER))


def claim_modules() -> list[str]:
    """Module names holding CLAIMS: technique folders first (sorted), then the ledgers."""
    names = [f"suite.techniques.{p.parent.name}.{p.stem}"
             for p in sorted((_SUITE / "techniques").glob("*/claims*.py"))]
    names += [f"suite.claims.{p.stem}" for p in sorted((_SUITE / "claims").glob("ledger_*.py"))]
    return names


def all_claims() -> list[Claim]:
    """Every claim in page order, ids unique; a module whose CLAIMS is malformed raises naming it."""
    found: dict[str, Claim] = {}
    for name in claim_modules():
        claims = getattr(importlib.import_module(name), "CLAIMS", None)
        if not isinstance(claims, tuple) or not all(isinstance(c, Claim) for c in claims):
            raise TypeError(f"{name}: CLAIMS must be a tuple of Claim")
        for c in claims:
            if c.id in found:
                raise ValueError(f"claim id {c.id!r} defined twice (second in {name})")
            found[c.id] = c
    return sorted(found.values(), key=lambda c: page_position(c.section))


def get(claim_id: str) -> Claim:
    for c in all_claims():
        if c.id == claim_id:
            return c
    raise KeyError(f"unknown claim {claim_id!r}")
