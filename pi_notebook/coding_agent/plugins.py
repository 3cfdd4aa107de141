"""Plugins: installed packages that add roles (with their converters), tools and transcript renderers.

A package registers a plugin under the entry-point group ``pi_notebook.plugins`` (importlib.metadata), naming a
function that is called once with a :class:`PluginSetup`::

    # pyproject.toml of the plugin package
    [project.entry-points."pi_notebook.plugins"]
    tickets = "pi_notebook_tickets:setup"

    # pi_notebook_tickets/__init__.py
    def setup(plugin):
        plugin.register_message_type(TicketEvent, to_llm=ticket_event_to_llm)
        plugin.register_tool("ticket_status", make_ticket_status, read_only=True)
        plugin.register_renderer("ticketEvent", files(__name__) / "ticket_event.js")

The setup's calls take the arguments of the public registries they stand for
(:func:`~pi_notebook.agent_core.register_message_type`, :func:`~pi_notebook.coding_agent.tools.register_tool`,
:func:`pi_notebook.notebook.widgets.register_renderer`); they are collected while the function runs and applied
once it has returned, so a plugin that fails registers nothing. A role or tool name another registration holds
fails the plugin too (it never replaces one). This layer applies the roles and tools; a renderer is kept as data
(its ES module's source) for the notebook, which gives it to the transcript (:mod:`pi_notebook.notebook.plugins`).

:func:`load_plugins` loads every plugin not loaded yet: ``%load_ext pi_notebook`` does, and so does an
:class:`~pi_notebook.coding_agent.agent_session.AgentSession` outside a notebook (the roles and the tools). A
plugin that fails to load costs one warning line; the others, and the extension, load.
"""

from __future__ import annotations

import importlib.metadata
import os
import re
import sys
import threading
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..agent_core import register_message_type, registered_message_types
from ..ai import PiModel
from .tools import ToolFactory, register_tool, registered_tools

__all__ = ["ENTRY_POINT_GROUP", "LoadedPlugin", "PluginError", "PluginSetup", "PluginWarning", "load_plugins"]

ENTRY_POINT_GROUP = "pi_notebook.plugins"
"""The entry-point group a plugin package registers its setup function under."""


_TOOL_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")  # what register_tool and the providers accept


class PluginError(ValueError):
    """A plugin that registers wrongly (a bad renderer, a role or tool name another registration holds)."""


class PluginWarning(UserWarning):
    """A plugin failed to load (the others and the extension still load)."""


@dataclass
class LoadedPlugin:
    """What one entry point of the group became."""

    name: str
    """The entry point's name (``tickets``)."""
    value: str
    """What it points at (``pi_notebook_tickets:setup``)."""
    distribution: str = ""
    """The package that installed it, with its version (``pi-notebook-tickets 0.1.0``), when known."""
    roles: list[str] = field(default_factory=list)
    """The roles it registered."""
    tools: list[str] = field(default_factory=list)
    """The tools it registered."""
    renderers: dict[str, str] = field(default_factory=dict)
    """Role → the ES module source of its transcript renderer (the notebook registers them)."""
    error: str = ""
    """Why it failed to load (``""``: it loaded)."""

    @property
    def ok(self) -> bool:
        return not self.error

    def describe(self) -> str:
        """One line: what it registered, or why it failed."""
        source = f" ({self.distribution})" if self.distribution else ""
        if self.error:
            return f"plugin {self.name!r}{source} failed to load, skipped: {self.error}"
        kinds = (("roles", self.roles), ("tools", self.tools), ("renderers", list(self.renderers)))
        parts = [f"{label} {', '.join(names)}" for label, names in kinds if names]
        return f"plugin {self.name!r}{source}: {'; '.join(parts) or 'nothing registered'}"


class PluginSetup:
    """What a plugin's setup function is called with: the registries, for this plugin. Each call is checked at
    once and applied after the function returns (all of them, or none if it raised)."""

    def __init__(self, name: str):
        self.name = name
        """The plugin's entry-point name."""
        self._roles: list[tuple[type[Any], Any]] = []
        self._tools: list[tuple[str, ToolFactory, bool, bool]] = []
        self._renderers: dict[str, str] = {}

    def register_message_type(self, model_cls: type[Any], *, to_llm: Any = None) -> type[Any]:
        """A role, as :func:`~pi_notebook.agent_core.register_message_type` registers it. Returns ``model_cls``."""
        if not (isinstance(model_cls, type) and issubclass(model_cls, PiModel)):
            raise PluginError(f"register_message_type: {model_cls!r} is not a PiModel subclass")
        role = _role_of(model_cls)
        if to_llm is not None and not callable(to_llm):
            raise PluginError(f"role {role!r}: to_llm must be callable, not {to_llm!r}")
        self._roles.append((model_cls, to_llm))
        return model_cls

    def register_tool(self, name: str, factory: ToolFactory, *, read_only: bool, default: bool = False) -> ToolFactory:
        """A tool, as :func:`~pi_notebook.coding_agent.tools.register_tool` registers it. Returns ``factory``."""
        if not isinstance(name, str) or not _TOOL_NAME.fullmatch(name):
            raise PluginError(f"tool name {name!r}: use 1 to 64 letters, digits, '_' or '-' (providers refuse others)")
        if not callable(factory):
            raise PluginError(f"tool {name!r}: the factory must be callable as factory(cwd), not {factory!r}")
        if not isinstance(read_only, bool) or not isinstance(default, bool):
            raise PluginError(f"tool {name!r}: read_only and default must be True or False")
        self._tools.append((name, factory, read_only, default))
        return factory

    def register_renderer(self, role: str, module: Any) -> None:
        """The transcript's renderer of ``role``: an ES module whose default export is ``render(message, el,
        helpers)`` (widgets/README.md), given as its source text or as a file shipped in the package (a path, or
        ``importlib.resources.files(__name__) / "renderer.js"``). The file is read now."""
        if not isinstance(role, str) or not role:
            raise PluginError("register_renderer: role must be a non-empty string, e.g. 'ticketEvent'")
        if isinstance(module, str) and "\n" not in module and module.strip().endswith((".js", ".mjs")):
            module = Path(module)
        if isinstance(module, str):
            source = module
        elif isinstance(module, os.PathLike) or hasattr(module, "read_text"):
            try:
                source = (Path(module) if isinstance(module, os.PathLike) else module).read_text(encoding="utf-8")
            except OSError as e:
                raise PluginError(f"renderer of {role!r}: cannot read {module}: {e.strerror or e}") from None
        else:
            raise PluginError(f"renderer of {role!r}: give ES module source or a .js file, not {type(module).__name__}")
        if not source.strip():
            raise PluginError(f"renderer of {role!r}: the module is empty")
        self._renderers[role] = source

    def _check(self) -> None:
        """A role or tool name held by another registration fails the plugin before anything is applied."""
        held = {t.role: t.model for t in registered_message_types()}
        for model_cls, _ in self._roles:
            role = _role_of(model_cls)
            if role in held and held[role] is not model_cls:
                raise PluginError(f"role {role!r} is already registered to {held[role].__qualname__}")
        tools = {t.name: t for t in registered_tools()}
        for name, factory, read_only, default in self._tools:
            existing = tools.get(name)
            if existing is not None and (existing.factory, existing.read_only, existing.default) != (
                factory, read_only, default,
            ):  # fmt: skip
                raise PluginError(f"tool {name!r} is already registered")

    def _apply(self, record: LoadedPlugin) -> None:
        self._check()
        for model_cls, to_llm in self._roles:
            register_message_type(model_cls, to_llm=to_llm)
            record.roles.append(_role_of(model_cls))
        for name, factory, read_only, default in self._tools:
            register_tool(name, factory, read_only=read_only, default=default)
            record.tools.append(name)
        record.renderers.update(self._renderers)


def _role_of(model_cls: Any) -> str:
    fields = getattr(model_cls, "model_fields", None)
    role = fields.get("role") if isinstance(fields, dict) else None
    value = getattr(role, "default", None)
    if not isinstance(value, str) or not value:
        raise PluginError(f"{model_cls!r} is not a message class with role: Literal['x'] = 'x'")
    return value


_loaded: dict[tuple[str, str], LoadedPlugin] = {}  # (name, value) → what loading it did
_lock = threading.RLock()


_scanned: tuple[tuple[tuple[str, int], ...], list[importlib.metadata.EntryPoint]] | None = None


def _path_stamp() -> tuple[tuple[str, int], ...]:
    """Each import folder with its modification time: installing or removing a package changes its folder's."""
    stamp = []
    for folder in sys.path:
        try:
            stamp.append((folder, os.stat(folder or ".").st_mtime_ns))
        except OSError:
            stamp.append((folder, -1))
    return tuple(stamp)


def _entry_points() -> list[importlib.metadata.EntryPoint]:
    """The group's entry points by name: the same order on every machine (the first of two clashing plugins
    wins). Reading every installed package's metadata takes tens of milliseconds, so the scan is kept while no
    import folder changed (a package installed in the running kernel is found by the next load)."""
    global _scanned
    stamp = _path_stamp()
    if _scanned is None or _scanned[0] != stamp:
        found = importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)
        _scanned = (stamp, sorted(found, key=lambda e: (e.name, e.value)))
    return _scanned[1]


def _distribution(entry_point: importlib.metadata.EntryPoint) -> str:
    dist = getattr(entry_point, "dist", None)
    if dist is None:
        return ""
    return f"{dist.metadata['Name']} {dist.version}"


def _load_one(entry_point: importlib.metadata.EntryPoint) -> LoadedPlugin:
    record = LoadedPlugin(entry_point.name, entry_point.value, _distribution(entry_point))
    try:
        setup_fn = entry_point.load()
        if not callable(setup_fn):
            raise PluginError(f"{entry_point.value} is not a function setup(plugin)")
        setup = PluginSetup(entry_point.name)
        setup_fn(setup)
        setup._apply(record)
    except Exception as e:  # a plugin is someone else's code: any failure is that plugin's, reported
        record.roles, record.tools, record.renderers = [], [], {}
        record.error = f"{type(e).__name__}: {e}" if str(e) else type(e).__name__
    return record


def _warn(text: str) -> None:
    warnings.warn(text, PluginWarning, stacklevel=3)


def load_plugins(*, warn: Callable[[str], None] | None = None) -> list[LoadedPlugin]:
    """Load each installed plugin (entry-point group :data:`ENTRY_POINT_GROUP`) not loaded yet in this process,
    applying its roles and tools; return every plugin loaded so far, those that failed included. A plugin that
    fails is reported once, as one line to ``warn`` (default: a :class:`PluginWarning`), and not tried again."""
    say = warn or _warn
    with _lock:
        for entry_point in _entry_points():
            key = (entry_point.name, entry_point.value)
            if key in _loaded:
                continue
            record = _loaded[key] = _load_one(entry_point)
            if not record.ok:
                say(record.describe())
        return list(_loaded.values())


def loaded_plugins() -> list[LoadedPlugin]:
    """The plugins :func:`load_plugins` loaded (or tried to), in order."""
    with _lock:
        return list(_loaded.values())
