"""What the verdict asks of each technique's spec, kept as JSON so that asking imports no kernel code (torch).

    python -m suite.facts --write     # after changing a technique's impls, cases, probe or time_depends_on_data

tests/test_technique_facts.py fails when suite/facts.json differs from what the registry says.
"""
from __future__ import annotations

import argparse
import functools
import json
from pathlib import Path
from typing import Optional

PATH = Path(__file__).with_name("facts.json")


def of_registry() -> dict[str, dict]:
    """{technique: {time_depends_on_data, probe, cases, expect_failure: {impl: reason}}} from the spec itself
    (imports every technique package)."""
    from suite.registry import techniques

    return {name: {"time_depends_on_data": bool(t.time_depends_on_data), "probe": bool(t.probe),
                   "cases": sorted(c.id for c in t.cases),
                   "expect_failure": {i.name: i.expect_failure for i in t.impls if i.expect_failure}}
            for name, t in sorted(techniques().items())}


@functools.lru_cache(maxsize=1)
def committed() -> dict[str, dict]:
    """The facts as committed in suite/facts.json ({} where the file is missing)."""
    return json.loads(PATH.read_text()) if PATH.is_file() else {}


def of(technique: str) -> Optional[dict]:
    """One technique's committed facts, None for one the file does not hold (an extra or new technique)."""
    return committed().get(technique)


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true", help=f"rewrite {PATH.name} from the registry")
    a = ap.parse_args(argv)
    text = json.dumps(of_registry(), indent=1, sort_keys=True) + "\n"
    if a.write:
        PATH.write_text(text)
        print(f"wrote {PATH}")
        return 0
    same = PATH.is_file() and PATH.read_text() == text
    print(f"{PATH.name} is {'up to date' if same else 'out of date: python -m suite.facts --write'}")
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
