"""The import direction, read from the source with `ast` (every import, at any depth)."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
UPPER = ("runners", "db", "ci", "dashboard")


def imported_modules(path: Path) -> set[str]:
    """Absolute module names a Python file imports, module-level or inside functions."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            if node.module in ("suite", "suite.techniques"):  # `from suite.techniques import x`
                found.update(f"{node.module}.{a.name}" for a in node.names)
    # String targets ("module:function") are imports too: the registry resolves them.
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            mod = node.value.partition(":")[0]
            if node.value.count(":") == 1 and mod.startswith(("suite.", "runners.", "db.", "ci.")):
                found.add(mod)
    return found


def violations(root: Path) -> list[str]:
    """'file -> module' for each import that breaks the rules: suite/ imports none of the upper
    folders; a technique folder imports suite/lib and itself, never another technique folder;
    suite/lib imports no technique folder."""
    bad = []
    for path in sorted((root / "suite").rglob("*.py")):
        rel = path.relative_to(root)
        own = rel.parts[2] if rel.parts[1] == "techniques" and len(rel.parts) > 3 else None
        in_lib = rel.parts[1] == "lib"
        for mod in sorted(imported_modules(path)):
            top = mod.split(".")[0]
            if top in UPPER:
                bad.append(f"{rel} -> {mod}")
            parts = mod.split(".")
            if parts[:2] == ["suite", "techniques"] and len(parts) > 2 and (in_lib or (own and parts[2] != own)):
                bad.append(f"{rel} -> {mod}")
    return bad


def db_runner_edges(root: Path) -> set[str]:
    """'file -> module' for each import of runners/ by a file under db/ (db sits above runners' results,
    not on its code)."""
    return {f"{path.relative_to(root)} -> {mod}" for path in sorted((root / "db").rglob("*.py"))
            for mod in imported_modules(path) if mod.split(".")[0] == "runners"}


def test_suite_imports_only_itself_and_technique_folders_read_alone():
    assert violations(ROOT) == []


def test_db_imports_nothing_from_runners():
    # the hash scheme (HASH_SCHEME, with_args) is in suite/record.py
    assert sorted(db_runner_edges(ROOT)) == []


def test_the_check_sees_a_broken_rule(tmp_path):
    tech = tmp_path / "suite" / "techniques"
    (tech / "a").mkdir(parents=True)
    (tech / "b").mkdir()
    (tech / "a" / "k.py").write_text("def f():\n    from suite.techniques.b.common import g\n")
    (tech / "b" / "k.py").write_text("import runners.timing\nT = 'suite.techniques.a.k:f'\n")
    (tmp_path / "suite" / "lib").mkdir()
    (tmp_path / "suite" / "lib" / "k.py").write_text("from db.models import Run\n"
                                                    "def f():\n    from suite.techniques.a.reference import EPS\n")
    (tmp_path / "db" / "migrations").mkdir(parents=True)
    (tmp_path / "db" / "migrations" / "m.py").write_text("def up():\n    from runners.code_hash import with_args\n")
    (tmp_path / "db" / "q.py").write_text("import runners\nimport suite.registry\n")
    assert violations(tmp_path) == ["suite/lib/k.py -> db.models",
                                    "suite/lib/k.py -> suite.techniques.a.reference",
                                    "suite/techniques/a/k.py -> suite.techniques.b.common",
                                    "suite/techniques/b/k.py -> runners.timing",
                                    "suite/techniques/b/k.py -> suite.techniques.a.k"]
    assert db_runner_edges(tmp_path) == {"db/migrations/m.py -> runners.code_hash", "db/q.py -> runners"}
