"""Imports flow one way: ai <- agent_core <- coding_agent <- notebook. A wrong-way import fails here.

``pi_notebook.agent`` only re-exports the core and the coding agent for users; nothing inside imports it.
"""

import ast
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "pi_notebook"
_FACADE = ("pi_notebook.agent",)
FORBIDDEN = {
    "ai": ("pi_notebook.agent_core", "pi_notebook.coding_agent", "pi_notebook.notebook", *_FACADE),
    "agent_core": ("pi_notebook.coding_agent", "pi_notebook.notebook", *_FACADE),
    "coding_agent": ("pi_notebook.notebook", *_FACADE),
    "notebook": _FACADE,
    "evals": _FACADE,
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


def _modules(layer: str) -> list[Path]:
    return sorted((PACKAGE / layer).rglob("*.py"))


def wrong_way_imports(layer: str) -> list[str]:
    bad = []
    for path in _modules(layer):
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


def test_every_layer_is_checked():
    packages = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists()}
    assert packages == set(FORBIDDEN)


def private_imports(path: Path) -> list[str]:
    """``from x import _name`` where x is another module, and imports of a private module (``ai._base``) from
    outside its package: reaching into another module's internals."""
    module = _module_name(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    bad = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.ImportFrom) or node.module == "__future__":
            continue
        if node.level:
            base = package.split(".")
            target = ".".join(base[: len(base) - (node.level - 1)] + ([node.module] if node.module else []))
        else:
            target = node.module or ""
        names = [a.name for a in node.names if a.name.startswith("_") and not a.name.startswith("__")]
        bad += [f"{path.name}:{node.lineno} imports {target}.{n}" for n in names]
        parts = target.split(".")
        for i, part in enumerate(parts):
            owner = ".".join(parts[:i])
            inside = package == owner or package.startswith(owner + ".")
            if part.startswith("_") and not part.startswith("__") and not inside:
                bad.append(f"{path.name}:{node.lineno} imports the private module {target}")
    return bad


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_no_module_imports_another_ones_private_names(layer):
    assert [bad for path in _modules(layer) for bad in private_imports(path)] == []


def test_private_import_checker_sees_both_kinds(tmp_path, monkeypatch):
    fake = tmp_path / "pi_notebook"
    (fake / "coding_agent").mkdir(parents=True)
    bad = fake / "coding_agent" / "trace.py"
    bad.write_text("from ..agent_core.convert import _run_stage, checked_list\nfrom ..ai._base import Number\n")
    monkeypatch.setattr(sys.modules[__name__], "PACKAGE", fake)
    assert len(private_imports(bad)) == 2


def test_the_core_alone_knows_no_app_role():
    # A fresh interpreter that imports only the core: a bashExecution message is opaque there, and becomes
    # typed once the coding agent is imported and has registered its roles.
    import subprocess

    code = (
        "from pi_notebook.agent_core import OpaqueMessage, from_pi_json, registered_message_types\n"
        "m = {'role': 'bashExecution', 'command': 'ls', 'output': '', 'exitCode': 0, 'cancelled': False,"
        " 'truncated': False, 'timestamp': 1}\n"
        "print(sorted(t.role for t in registered_message_types()), isinstance(from_pi_json(m), OpaqueMessage))\n"
        "import pi_notebook.coding_agent\n"
        "print(type(from_pi_json(m)).__name__)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.splitlines() == ["['assistant', 'toolResult', 'user'] True", "BashExecutionMessage"]


def test_the_old_import_paths_still_work():
    import pi_notebook.agent.session as old_session
    import pi_notebook.agent.tools.shell as old_shell

    import pi_notebook.agent as facade
    import pi_notebook.coding_agent.session as session
    import pi_notebook.coding_agent.tools.shell as shell
    from pi_notebook.ai import faux
    from pi_notebook.ai.providers import faux as old_faux

    assert old_session is session and old_shell is shell and old_faux is faux
    [sent] = facade.convert_to_llm([facade.BashExecutionMessage(command="ls", output="a", exit_code=0)])
    assert sent.content[0].text == "Ran `ls`\n```\na\n```"
