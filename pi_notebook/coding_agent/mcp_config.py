"""The MCP servers the agent's tools come from: one JSON file, in the ``mcpServers`` shape Claude Desktop, Cursor
and Claude Code use.

The file is ``~/.pi_notebook/mcp.json``, or the one the environment variable ``PI_NOTEBOOK_MCP_CONFIG`` names::

    {
      "mcpServers": {
        "files": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/data"]},
        "search": {"url": "http://127.0.0.1:8000/mcp", "headers": {"Authorization": "Bearer ${SEARCH_TOKEN}"}},
        "old": {"command": "old-server", "disabled": true}
      }
    }

A server with ``command`` (and ``args``, ``env``, ``cwd``) is started as a subprocess and spoken to over stdio; one
with ``url`` over streamable HTTP (``headers`` sent with every request). ``type`` may say so (``stdio``, ``http``,
``streamable-http``); ``sse``, the transport MCP deprecated, is refused. ``${VAR}``, ``${env:VAR}`` and
``${VAR:-default}`` in a string are replaced by the environment's value (a key stays out of the file).
``timeout``: seconds to connect and list the tools (default 30); ``toolTimeout``: seconds one call may take (default
300; then the call fails, and the next one connects again). ``disabled: true`` leaves a server out.

Reading is pure: a file that is not there is no servers; a server that is wrong is an error line of its own, and the
other servers stand.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

__all__ = ["CONFIG_ENV", "DEFAULT_CONFIG", "McpConfig", "McpServerConfig", "mcp_config_path", "read_mcp_config"]

CONFIG_ENV = "PI_NOTEBOOK_MCP_CONFIG"
"""The environment variable naming another config file."""
DEFAULT_CONFIG = "~/.pi_notebook/mcp.json"
"""Where the config file is unless :data:`CONFIG_ENV` says otherwise."""
DEFAULT_TIMEOUT = 30.0
"""Seconds a server has to start, answer the handshake and list its tools."""
DEFAULT_TOOL_TIMEOUT = 300.0
"""Seconds one tool call may take."""

_VAR = re.compile(r"\$\{(?:env:)?([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
_TYPES = {
    "stdio": "stdio",
    "http": "http",
    "streamable-http": "http",
    "streamablehttp": "http",
    "streamable_http": "http",
}


@dataclass(frozen=True)
class McpServerConfig:
    """One entry of ``mcpServers``."""

    name: str
    """Its key in the file; the prefix of its tools' names."""
    transport: Literal["stdio", "http"]
    command: str = ""
    """stdio: the program to start."""
    args: tuple[str, ...] = ()
    env: Mapping[str, str] | None = None
    """stdio: variables set for the server, over the SDK's safe default environment."""
    cwd: str | None = None
    url: str = ""
    """http: the streamable HTTP endpoint (``http://127.0.0.1:8000/mcp``)."""
    headers: Mapping[str, str] = field(default_factory=dict)
    timeout: float = DEFAULT_TIMEOUT
    """Seconds to connect and list the tools."""
    tool_timeout: float = DEFAULT_TOOL_TIMEOUT
    """Seconds one call may take."""


@dataclass
class McpConfig:
    """What a config file holds: its servers, and one line for each entry that could not be read."""

    path: Path
    servers: list[McpServerConfig] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    exists: bool = False


def mcp_config_path(environ: Mapping[str, str] | None = None) -> Path:
    """The config file: ``$PI_NOTEBOOK_MCP_CONFIG``, else ``~/.pi_notebook/mcp.json``."""
    env = os.environ if environ is None else environ
    return Path(env.get(CONFIG_ENV) or DEFAULT_CONFIG).expanduser()


class _MissingVariable(ValueError):
    pass


def _expand(value: Any, environ: Mapping[str, str], where: str) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{where} must be a string, not {json.dumps(value)}")

    def one(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        if name in environ:
            return environ[name]
        if default is not None:
            return default
        raise _MissingVariable(f"{where} names ${{{name}}}, which is not set in the environment")

    return _VAR.sub(one, value)


def _strings(value: Any, environ: Mapping[str, str], where: str) -> dict[str, str]:
    if not isinstance(value, dict):
        raise ValueError(f"{where} must be an object of strings")
    return {str(k): _expand(v, environ, f"{where}.{k}") for k, v in value.items()}


def _seconds(entry: dict[str, Any], key: str, default: float) -> float:
    value = entry.get(key, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise ValueError(f"{key} must be a number of seconds, not {json.dumps(value)}")
    return float(value)


def _server(name: str, entry: Any, environ: Mapping[str, str]) -> McpServerConfig | None:
    """The server an entry describes; ``None`` when disabled; ValueError saying what is wrong."""
    if not isinstance(entry, dict):
        raise ValueError("must be an object with a command (stdio) or a url (streamable HTTP)")
    if entry.get("disabled") is True:
        return None
    kind = str(entry.get("type") or entry.get("transport") or "").lower()
    url = entry.get("url", entry.get("serverUrl"))
    if kind == "sse":
        raise ValueError("the SSE transport (deprecated in MCP) is not supported: give its streamable HTTP url")
    if kind and kind not in _TYPES:
        raise ValueError(f"unknown type {kind!r}: use stdio or http (streamable HTTP)")
    transport = _TYPES.get(kind) or ("http" if url is not None and "command" not in entry else "stdio")
    timeout = _seconds(entry, "timeout", DEFAULT_TIMEOUT)
    tool_timeout = _seconds(entry, "toolTimeout", DEFAULT_TOOL_TIMEOUT)
    if transport == "http":
        if url is None:
            raise ValueError("a streamable HTTP server needs a url")
        address = _expand(url, environ, "url")
        if not re.match(r"https?://", address):
            raise ValueError(f"url must start with http:// or https://, not {address!r}")
        headers = _strings(entry.get("headers", {}), environ, "headers")
        return McpServerConfig(name, "http", url=address, headers=headers, timeout=timeout, tool_timeout=tool_timeout)
    command = entry.get("command")
    if not isinstance(command, str) or not command.strip():
        raise ValueError("needs a command to start (stdio) or a url (streamable HTTP)")
    args = entry.get("args", [])
    if not isinstance(args, list):
        raise ValueError("args must be a list of strings")
    env = _strings(entry["env"], environ, "env") if entry.get("env") is not None else None
    cwd = _expand(entry["cwd"], environ, "cwd") if entry.get("cwd") is not None else None
    return McpServerConfig(
        name, "stdio", command=_expand(command, environ, "command"),
        args=tuple(_expand(a, environ, f"args[{i}]") for i, a in enumerate(args)), env=env,
        cwd=str(Path(cwd).expanduser()) if cwd else None, timeout=timeout, tool_timeout=tool_timeout,
    )  # fmt: skip


def read_mcp_config(path: str | os.PathLike[str] | None = None, environ: Mapping[str, str] | None = None) -> McpConfig:
    """The servers of the config file (``path``, else :func:`mcp_config_path`). No file: no servers. A file that
    is not JSON or not the ``mcpServers`` shape is one error line; a wrong server entry is one line too, and the
    others are read."""
    env = os.environ if environ is None else environ
    file = Path(path).expanduser() if path is not None else mcp_config_path(env)
    config = McpConfig(file)
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        return config
    except OSError as e:
        config.errors.append(f"cannot read {file}: {e.strerror or e}")
        return config
    config.exists = True
    try:
        data = json.loads(text)
    except ValueError as e:
        config.errors.append(f"{file} is not JSON: {e}")
        return config
    servers = data.get("mcpServers") if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        config.errors.append(f'{file} holds no "mcpServers" object')
        return config
    for name, entry in servers.items():
        try:
            server = _server(str(name), entry, env)
        except ValueError as e:
            config.errors.append(f"MCP server {name!r} in {file}: {e}")
            continue
        if server is not None:
            config.servers.append(server)
    return config
