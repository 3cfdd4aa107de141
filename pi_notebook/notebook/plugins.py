"""What installed packages and the MCP config add to the notebook, at ``%load_ext pi_notebook``.

- **Plugins** (:mod:`pi_notebook.coding_agent.plugins`, entry-point group ``pi_notebook.plugins``): their roles and
  tools are applied by the coding agent; their renderers are registered here for the transcript
  (:func:`~.widgets.register_renderer` with ``saved=True``): the live widget gets each as an ES module source in its
  ``renderers`` trait; a finished cell's saved form carries those of the roles it shows, which the JupyterLab
  extension runs only in a trusted notebook (as JupyterLab runs an output's HTML and scripts); an exported page
  carries them too. A plugin's renderer is code its package installed, like its Python; the messages it draws are
  data, put in the page through the helpers that escape and sanitise them.
- **MCP tools** (:mod:`pi_notebook.coding_agent.mcp`): the servers of ``~/.pi_notebook/mcp.json`` (or
  ``$PI_NOTEBOOK_MCP_CONFIG``), connected on the background loop the agent's runs use (:mod:`.runner`).

A plugin or a server that fails is one line in the cell; the extension loads all the same.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ..coding_agent.mcp_config import read_mcp_config
from ..coding_agent.plugins import LoadedPlugin
from ..coding_agent.plugins import load_plugins as _load_plugins
from .utf8 import say as _say

if TYPE_CHECKING:
    from ..coding_agent.mcp import McpLoad

__all__ = ["close_mcp_servers", "connect_mcp_servers", "load_plugins"]

_mcp_started = False  # connect_mcp_servers() read a config file: there may be connections to close
_given: set[tuple[str, str]] = set()  # (role, source) of the plugin renderers registered: each once per process


def load_plugins(say: Callable[[str], None] = _say) -> list[LoadedPlugin]:
    """Load the installed plugins not loaded yet (their roles and tools) and register their renderers; each plugin
    that fails is one line to ``say``. Returns every plugin loaded so far."""
    plugins = _load_plugins(warn=lambda text: say(f"pi_notebook: {text}"))
    for plugin in plugins:
        for role, source in plugin.renderers.items():
            if (role, source) not in _given:  # registered once: a renderer registered later by hand stays
                from .widgets import register_renderer  # (a widget library: only when a plugin has a renderer)

                _given.add((role, source))
                register_renderer(role, source, saved=True)
    return plugins


def connect_mcp_servers(say: Callable[[str], None] = _say) -> McpLoad | None:
    """Connect the MCP servers of the config file on the agent's background loop and register their tools; one
    line says which tools came from where, one more per server that failed. Without a config file: nothing (and
    neither the SDK nor the loop is started)."""
    global _mcp_started
    if not read_mcp_config().exists:
        return None
    from ..coding_agent.mcp import load_mcp_tools

    _mcp_started = True
    from .runner import background_loop

    loaded = load_mcp_tools(loop=background_loop().loop, warn=lambda text: say(f"pi_notebook: {text}"))
    if loaded.tools:
        say(f"pi_notebook: {loaded.describe()}")
    return loaded


def close_mcp_servers() -> None:
    """Close the MCP servers' connections and unregister their tools (``%unload_ext``)."""
    if _mcp_started:
        from ..coding_agent.mcp import close_mcp_servers as close

        close()
