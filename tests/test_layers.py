"""Imports flow one way: ai <- agent <- notebook. A wrong-way import fails here."""

import ast
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "pi_notebook"
FORBIDDEN = {
    "ai": ("pi_notebook.agent", "pi_notebook.notebook"),
    "agent": ("pi_notebook.notebook",),
}


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path: Path) -> list[tuple[int, str]]:
    """Absolute names of every module ``path`` imports (relative imports resolved)."""
    module = _module_name(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            found.append((node.lineno, target))
            # `from .. import agent` imports a sub-package by name
            found += [(node.lineno, f"{target}.{alias.name}") for alias in node.names]
    return found


def wrong_way_imports(layer: str) -> list[str]:
    bad = []
    for path in sorted((PACKAGE / layer).rglob("*.py")):
        for lineno, name in imported_modules(path):
            if any(name == f or name.startswith(f + ".") for f in FORBIDDEN[layer]):
                bad.append(f"{path.relative_to(PACKAGE.parent)}:{lineno} imports {name}")
    return bad


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_no_wrong_way_imports(layer):
    assert wrong_way_imports(layer) == []


def test_checker_catches_a_relative_wrong_way_import(tmp_path, monkeypatch):
    # The checker itself must see `from ..agent import x` inside the ai layer.
    fake = tmp_path / "pi_notebook"
    (fake / "ai").mkdir(parents=True)
    (fake / "ai" / "bad.py").write_text("from ..agent import convert_to_llm\nimport pi_notebook.notebook\n")
    monkeypatch.setattr(sys.modules[__name__], "PACKAGE", fake)
    assert len(wrong_way_imports("ai")) == 3
