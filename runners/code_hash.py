"""The version of an implementation: a hash of the source it actually imports inside `suite/` and of its args."""
from __future__ import annotations

import ast
import hashlib
import importlib.util
import json
from functools import lru_cache
from pathlib import Path

# Written into a run's config by the writers of this hash; a run without it predates the args and is
# re-keyed at ingest (rekey_doc), so its rows and newer ones of the same code carry one hash.
HASH_SCHEME = "closure+args/1"


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


def with_args(closure_hash: str, args: dict) -> str:
    """The hash of an implementation from its closure hash and its args (no args: the closure hash)."""
    if not args:
        return closure_hash
    canonical = json.dumps(args, sort_keys=True, separators=(",", ":"), default=repr)
    return hashlib.sha256(f"{closure_hash}\0{canonical}".encode()).hexdigest()[:16]


def rekey_doc(doc: dict, args_of) -> dict:
    """A result document written before HASH_SCHEME with each row's impl_hash as it would be written now:
    with_args(stored hash, args) where `args_of(technique, impl)` names the implementation's args
    (None when it has none or is unknown). Documents already of HASH_SCHEME come back unchanged."""
    if doc["run"].get("config", {}).get("impl_hash") == HASH_SCHEME:
        return doc
    rows, memo = [], {}
    for r in doc["results"]:
        key = (r["technique"], r["impl"])
        if r.get("impl_hash") and key not in memo:
            memo[key] = args_of(*key)
        args = memo.get(key) if r.get("impl_hash") else None
        rows.append({**r, "impl_hash": with_args(r["impl_hash"], args)} if args else r)
    return {**doc, "results": rows}


def registry_args(technique: str, impl: str) -> dict | None:
    """The args of an implementation in today's registry (None for unknown techniques and impls)."""
    from suite.registry import get  # lazily: a technique folder imports torch

    try:
        tech = get(technique)
    except Exception:  # unknown, or a folder that no longer imports: nothing to re-key by
        return None
    found = next((i for i in tech.impls if i.name == impl), None)
    return dict(found.args) if found and found.args else None


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
