"""Packages that import their public names on first use (PEP 562), so ``import pi_notebook`` and
``%load_ext pi_notebook`` pay only for the modules the session actually needs (#12, P2).

A package lists, per submodule, the names it re-exports, and binds the two functions this returns::

    __getattr__, __dir__ = lazy_exports(__name__, {".types": ["Model", ...], ".streaming": ["stream", ...]})

``from pi_notebook.ai import Model`` works as before: the first access imports ``.types`` and keeps the name in
the package, so the next access is a plain attribute read.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterable, Mapping
from typing import Any


def lazy_exports(
    package: str, exports: Mapping[str, Iterable[str]]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``: each name in ``exports[submodule]`` is imported from that
    submodule (relative to the package) when first read."""
    where = {name: module for module, names in exports.items() for name in names}

    def __getattr__(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module, package), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *where})

    return __getattr__, __dir__
