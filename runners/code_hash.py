"""The version of an implementation: a hash of the source it actually imports inside `suite/` and of its args."""
from __future__ import annotations

import ast
import hashlib
import importlib.util
from functools import lru_cache
from pathlib import Path

# The hash scheme's pure parts (HASH_SCHEME, with_args) live in the result record, which db reads too.
from suite.record import HASH_SCHEME, with_args  # noqa: F401


@lru_cache(maxsize=None)
def _source_file(module: str) -> Path | None:
    """The .py file of a `suite.*` module, or None (not a suite module, or not found)."""
    if module != "suite" and not module.startswith("suite."):
        return None
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.origin or not spec.origin.endswith(".py"):
        return None
    return Path(spec.origin)


@lru_cache(maxsize=None)
def _imports(path: Path) -> tuple[str, ...]:
    """Modules a file imports (at any depth, relative imports resolved are not used in suite/)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append(node.module)
            found += [f"{node.module}.{a.name}" for a in node.names]  # `from pkg import module`
    return tuple(found)


def import_closure(module: str) -> list[Path]:
    """The files of `module` and of every suite module it imports, transitively, sorted.
    Package __init__ files are left out, and so is what only they import (a technique's spec and
    suite.spec): a package's spec judges its code, it is not part of it."""
    seen: dict[str, Path] = {}
    todo = [module]
    while todo:
        name = todo.pop()
        path = _source_file(name)
        if path is None or name in seen:
            continue
        seen[name] = path
        if path.name != "__init__.py" or name == module:
            todo += _imports(path)
    return sorted(p for n, p in seen.items() if p.name != "__init__.py" or n == module)


def impl_hash(tech, impl) -> str:
    """sha256 (16 hex) of the source files in the import closure of the implementation's target,
    each under its path relative to suite/, and of its args (two variants of one kernel differ)."""
    return with_args(closure_hash(impl.target.partition(":")[0]), impl.args)


def closure_hash(module: str) -> str:
    """sha256 (16 hex) of the source files in the import closure of a suite module."""
    return _digest(import_closure(module))


def module_hash(module: str) -> str:
    """The same hash for a study driver outside suite/: its own file plus the suite code it imports."""
    own = Path(importlib.util.find_spec(module).origin)
    return _digest([own, *(p for m in _imports(own) for p in import_closure(m))])


def _digest(files) -> str:
    h = hashlib.sha256()
    for f in sorted(set(files)):
        rel = f.as_posix().rsplit("/suite/", 1)[-1]
        h.update(rel.encode() + b"\0" + f.read_bytes())
    return h.hexdigest()[:16]
