"""Imports flow one way: ai <- agent_core <- coding_agent <- notebook. A wrong-way import fails here.

``pi_notebook.agent`` only re-exports the core and the coding agent for users; nothing inside imports it. No
module answers to a second import path (``sys.modules`` aliases, module-class swaps).
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
    "lessons": _FACADE,
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


def module_rewrites(path: Path) -> list[str]:
    """Where ``path`` puts a module into ``sys.modules`` (one module under a second name, an alias) or swaps a
    module's class: the ways a module answers to an import path that is not its own file."""
    sys_names, modules_names = set(), set()
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            sys_names |= {a.asname or a.name for a in node.names if a.name == "sys"}
        elif isinstance(node, ast.ImportFrom) and node.module == "sys" and not node.level:
            modules_names |= {a.asname or a.name for a in node.names if a.name == "modules"}

    def is_sys_modules(node: ast.AST) -> bool:
        if isinstance(node, ast.Attribute) and node.attr == "modules":
            return isinstance(node.value, ast.Name) and node.value.id in sys_names
        return isinstance(node, ast.Name) and node.id in modules_names

    bad = []
    for node in ast.walk(tree):
        targets = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
            targets = [node.target]
        elif isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Attribute) and func.attr in ("update", "setdefault", "__setitem__"):
                if is_sys_modules(func.value):
                    bad.append(f"{path.name}:{node.lineno} calls sys.modules.{func.attr}")
            elif isinstance(func, ast.Name) and func.id == "setattr" and _is_text(node.args[1:2], "__class__"):
                bad.append(f"{path.name}:{node.lineno} swaps a class with setattr")
        for target in (t for top in targets for t in _assigned(top)):
            if isinstance(target, ast.Subscript) and is_sys_modules(target.value):
                bad.append(f"{path.name}:{node.lineno} assigns into sys.modules")
            elif isinstance(target, ast.Attribute) and target.attr == "__class__":
                bad.append(f"{path.name}:{node.lineno} swaps a class")
    return bad


def _assigned(target: ast.expr) -> list[ast.expr]:
    """What an assignment target binds: itself, or each item of a tuple or list target."""
    if isinstance(target, (ast.Tuple, ast.List)):
        return [t for item in target.elts for t in _assigned(item)]
    return _assigned(target.value) if isinstance(target, ast.Starred) else [target]


def _is_text(args: list[ast.expr], text: str) -> bool:
    return len(args) == 1 and isinstance(args[0], ast.Constant) and args[0].value == text


def _files(where: str) -> list[Path]:
    return sorted(PACKAGE.glob("*.py")) if where == "." else _modules(where)


@pytest.mark.parametrize("where", [".", *sorted(FORBIDDEN)])
def test_no_module_rewrites_sys_modules(where):
    # One path per name (style rule 12): a module is imported by the path of its file, nowhere else.
    assert [bad for path in _files(where) for bad in module_rewrites(path)] == []


def test_rewrite_checker_sees_aliases_and_class_swaps(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text(
        "import sys\nimport sys as _sys\nfrom sys import modules as mods\n"
        "sys.modules[__name__] = other\n"  # an alias
        "_sys.modules['pkg.old'], x = new, 1\n"  # an alias, through a renamed sys
        "mods['pkg.old'] = new\n"
        "sys.modules.update({'pkg.old': new})\n"
        "sys.modules[__name__].__class__ = Package\n"  # a module-class swap
        "setattr(sys.modules[__name__], '__class__', Package)\n"
        # what is allowed: reading sys.modules, setting a module's attribute
        "found = sys.modules.get('httpx')\nsetattr(sys.modules[__name__], name, value)\n"
    )
    assert len(module_rewrites(bad)) == 6


def test_the_facade_only_re_exports_the_layers():
    import importlib

    import pi_notebook.agent as facade
    import pi_notebook.agent_core as core
    import pi_notebook.coding_agent as app

    for name in facade.__all__:
        assert any(getattr(facade, name) is getattr(layer, name, None) for layer in (core, app)), name
    with pytest.raises(ModuleNotFoundError):  # the module paths used before the split are gone
        importlib.import_module("pi_notebook.agent.session")


def import_circles() -> list[list[str]]:
    """Circles of modules of the package that import each other (at the top or inside a function), as lists of
    module names; the package ``__init__`` modules are left out (a package imports its modules by design)."""
    files = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py")) if p.name != "__init__.py"}
    graph = {
        name: {target for _line, target in imported_modules(path) if target in files and target != name}
        for name, path in files.items()
    }
    circles: list[list[str]] = []
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(name: str) -> None:
        state[name] = 1
        path.append(name)
        for target in sorted(graph[name]):
            if state.get(target) == 1:
                circles.append(path[path.index(target) :])
            elif target not in state:
                visit(target)
        path.pop()
        state[name] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name)
    return circles


def test_no_modules_import_each_other_in_a_circle():
    assert import_circles() == []


def test_circle_checker_sees_a_circle_through_a_function_import(tmp_path, monkeypatch):
    fake = tmp_path / "pi_notebook"
    (fake / "ai").mkdir(parents=True)
    (fake / "ai" / "a.py").write_text("from .b import x\n")
    (fake / "ai" / "b.py").write_text("def f():\n    from .a import y\n")
    monkeypatch.setattr(sys.modules[__name__], "PACKAGE", fake)
    assert import_circles() == [["pi_notebook.ai.a", "pi_notebook.ai.b"]]
