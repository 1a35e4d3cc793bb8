"""Discovery of techniques: every package under suite/techniques exporting TECHNIQUE."""
from __future__ import annotations

import functools
import importlib
import os
import pkgutil

import suite.techniques
from suite import facts
from suite.spec import Technique


def techniques() -> dict[str, Technique]:
    """All techniques by name, in folder order."""
    found: dict[str, Technique] = {}
    for info in sorted(pkgutil.iter_modules(suite.techniques.__path__), key=lambda i: i.name):
        if not info.ispkg:
            continue
        module = importlib.import_module(f"suite.techniques.{info.name}")
        # A folder holds one technique (TECHNIQUE) or several over the same code (TECHNIQUES).
        for tech in getattr(module, "TECHNIQUES", (getattr(module, "TECHNIQUE", None),)):
            if isinstance(tech, Technique):
                found[tech.name] = tech
    # Extra technique modules (comma-separated), e.g. the deliberately faulty ones the tests use.
    for name in filter(None, os.environ.get("KWATCH_EXTRA_TECHNIQUES", "").split(",")):
        tech = importlib.import_module(name.strip()).TECHNIQUE
        found[tech.name] = tech
    return found


def get(name: str) -> Technique:
    """One technique by name (its own folder imported first), else a clear error naming the known ones."""
    try:
        tech = getattr(importlib.import_module(f"suite.techniques.{name}"), "TECHNIQUE", None)
    except ModuleNotFoundError as exc:
        if exc.name != f"suite.techniques.{name}":
            raise
        tech = None
    if isinstance(tech, Technique) and tech.name == name:
        return tech
    all_ = techniques()
    if name not in all_:
        raise KeyError(f"unknown technique {name!r}; known: {', '.join(all_) or 'none'}")
    return all_[name]


@functools.lru_cache(maxsize=None)
def known_failure(technique: str, impl: str, case_id: str) -> str:
    """Why a failed row of this series is expected ("" when it is not): the impl's `expect_failure`,
    or a probe point (a case id the technique does not declare, written by its probe), whose failed
    correctness is a measurement. For result rows written before runs recorded either in `stats`.
    Read from suite/facts.json where it holds the technique (no kernel code imported)."""
    known = facts.of(technique)
    if known is not None:
        if known["expect_failure"].get(impl):
            return known["expect_failure"][impl]
        return "probe point: its failed correctness is a measurement" if known["probe"] and case_id not in \
            known["cases"] else ""
    try:
        tech = get(technique)
    except Exception:  # unknown or broken technique: nothing is known about it
        return ""
    found = next((i for i in tech.impls if i.name == impl), None)
    if found is not None and found.expect_failure:
        return found.expect_failure
    if tech.probe and case_id not in {c.id for c in tech.cases}:
        return "probe point: its failed correctness is a measurement"
    return ""


def time_depends_on_data(technique: str) -> bool:
    """Whether the technique's time depends on its input instance (Technique.time_depends_on_data);
    False for a technique this registry does not know. Read from suite/facts.json where it holds the technique."""
    known = facts.of(technique)
    if known is not None:
        return known["time_depends_on_data"]
    try:
        return get(technique).time_depends_on_data
    except Exception:  # unknown or broken technique: nothing is known about it
        return False
