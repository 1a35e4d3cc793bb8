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
    folders; a technique folder imports suite/lib and itself, never another technique folder."""
    bad = []
    for path in sorted((root / "suite").rglob("*.py")):
        rel = path.relative_to(root)
        own = rel.parts[2] if rel.parts[1] == "techniques" and len(rel.parts) > 3 else None
        for mod in sorted(imported_modules(path)):
            top = mod.split(".")[0]
            if top in UPPER:
                bad.append(f"{rel} -> {mod}")
            parts = mod.split(".")
            if own and parts[:2] == ["suite", "techniques"] and len(parts) > 2 and parts[2] != own:
                bad.append(f"{rel} -> {mod}")
    return bad


def test_suite_imports_only_itself_and_technique_folders_read_alone():
    assert violations(ROOT) == []


def test_the_check_sees_a_broken_rule(tmp_path):
    tech = tmp_path / "suite" / "techniques"
    (tech / "a").mkdir(parents=True)
    (tech / "b").mkdir()
    (tech / "a" / "k.py").write_text("def f():\n    from suite.techniques.b.common import g\n")
    (tech / "b" / "k.py").write_text("import runners.timing\nT = 'suite.techniques.a.k:f'\n")
    (tmp_path / "suite" / "lib.py").write_text("from db.models import Run\n")
    assert violations(tmp_path) == ["suite/lib.py -> db.models",
                                    "suite/techniques/a/k.py -> suite.techniques.b.common",
                                    "suite/techniques/b/k.py -> runners.timing",
                                    "suite/techniques/b/k.py -> suite.techniques.a.k"]
