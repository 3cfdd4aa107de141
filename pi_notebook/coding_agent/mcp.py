"""Tools from MCP servers (the optional extra ``mcp``: the official ``mcp`` Python SDK).

Each server of the config file (:mod:`.mcp_config`: ``~/.pi_notebook/mcp.json`` or ``$PI_NOTEBOOK_MCP_CONFIG``) is
connected once, its tools listed, and each tool registered like a built-in
(:func:`~pi_notebook.coding_agent.tools.register_tool`) as ``<server>_<tool>``: a name every provider accepts
(``^[a-zA-Z0-9_-]{1,64}$``; other characters become ``_``, a long one is cut and made unique). ``--tools``,
``%agent_config tools=`` and ``tools=`` name them; a call is an ordinary tool call and result in the session, and the
inspector's request bodies list them. The server's description and JSON Schema are given to the model as they are;
a tool whose ``readOnlyHint`` is true is registered read-only; each joins the default tools.

A connection lives on one event loop, the one it was opened on, held by a task of its own (the SDK's transports
are anyio task groups, which must be left by the task that entered them). The notebook opens them on the loop its
runs use (:mod:`pi_notebook.notebook.runner`); a call made on another loop is handed to that one. Without a loop
given, they are opened on a loop of this module's, on a daemon thread. A connection that broke is opened again at
the next call.

A tool's result: its text blocks as text, its images as images, other blocks described in a line; structured
content alone as its JSON. A result marked ``isError`` fails the call (the model reads its text as an error
result). Pi leaves MCP out on purpose; see the README's differences from Pi.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import re
import tempfile
import threading
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

from ..agent_core import AgentTool, AgentToolResult
from ..ai import ImageContent, TextContent
from .mcp_config import McpServerConfig, read_mcp_config
from .tools import ToolFactory, ToolRegistryError, register_tool, registered_tool, unregister_tool
from .tools.errors import ToolError, abortable

__all__ = ["McpLoad", "McpServer", "close_mcp_servers", "load_mcp_tools", "mcp_servers", "mcp_tool_name"]

_NOT_NAME = re.compile(r"[^A-Za-z0-9_-]")
MAX_NAME = 64
INSTALL_HINT = "pip install 'pi_notebook[mcp]'"


def mcp_tool_name(server: str, tool: str) -> str:
    """The agent's name of ``tool`` from ``server``: ``<server>_<tool>``, in ``^[a-zA-Z0-9_-]{1,64}$``."""
    name = _NOT_NAME.sub("_", f"{server}_{tool}")
    if len(name) <= MAX_NAME:
        return name
    digest = hashlib.sha256(f"{server}\0{tool}".encode()).hexdigest()[:8]
    return f"{name[: MAX_NAME - 9]}_{digest}"


def _leaf(error: BaseException) -> BaseException:
    """The first real error inside anyio's exception groups."""
    while isinstance(getattr(error, "exceptions", None), (list, tuple)) and error.exceptions:  # type: ignore[attr-defined]
        error = error.exceptions[0]  # type: ignore[attr-defined]
    return error


def _describe(error: BaseException) -> str:
    leaf = _leaf(error)
    text = str(leaf).strip()
    return f"{type(leaf).__name__}: {text}" if text else type(leaf).__name__


def _is_protocol_error(error: BaseException) -> bool:
    """An error the server answered (unknown tool, bad arguments): the connection itself is fine."""
    return type(_leaf(error)).__name__ in ("McpError", "MCPError")


@contextlib.asynccontextmanager
async def _http_streams(url: str, headers: dict[str, str]) -> AsyncIterator[tuple[Any, Any]]:
    """The streamable HTTP transport's (read, write) streams (mcp 1.x yields a third item), the config's headers
    on an HTTP client of the SDK's making (its timeouts)."""
    from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client

    if not headers:
        async with streamable_http_client(url) as streams:
            yield streams[0], streams[1]
        return
    async with (
        create_mcp_http_client(headers=headers) as client,
        streamable_http_client(url, http_client=client) as streams,
    ):
        yield streams[0], streams[1]


async def _list_tools(session: Any) -> list[dict[str, Any]]:
    """Every tool the server lists (all pages), as its wire JSON."""
    tools: list[dict[str, Any]] = []
    result = await session.list_tools()
    for _ in range(100):  # a server paging for ever
        page = result.model_dump(mode="json", by_alias=True, exclude_none=True)
        tools += page.get("tools", [])
        cursor = page.get("nextCursor")
        if not cursor:
            break
        from mcp import types

        result = await session.list_tools(params=types.PaginatedRequestParams(cursor=cursor))
    return tools


class McpServer:
    """One server of the config: its connection (open on one event loop) and the tools it listed."""

    def __init__(self, config: McpServerConfig):
        self.config = config
        self.tools: list[dict[str, Any]] = []
        """The tools it listed, as MCP's JSON (``name``, ``description``, ``inputSchema``, ``annotations``...)."""
        self.loop: asyncio.AbstractEventLoop | None = None
        """The loop the connection is open on."""
        self._session: Any = None
        self._stop: asyncio.Event | None = None
        self._task: asyncio.Task[None] | None = None
        self._errlog: Any = None

    @property
    def name(self) -> str:
        return self.config.name

    @property
    def connected(self) -> bool:
        return self._session is not None and self.loop is not None and not self.loop.is_closed()

    # --- the connection -------------------------------------------------------------------------------------

    async def connect(self) -> list[dict[str, Any]]:
        """Open the connection on the running loop (a connection open on another loop is closed first), answer
        the handshake and list the tools, within the server's ``timeout``. Returns the tools."""
        loop = asyncio.get_running_loop()
        if self._session is not None and self.loop is loop:
            return self.tools
        await self.close()
        ready: asyncio.Future[None] = loop.create_future()
        self._stop = asyncio.Event()
        self.loop = loop
        self._task = loop.create_task(self._hold(ready, self._stop), name=f"mcp-{self.name}")
        try:
            await asyncio.wait_for(asyncio.shield(ready), self.config.timeout)
        except asyncio.TimeoutError:
            await self.close()
            raise TimeoutError(
                f"no answer within {self.config.timeout:g} s{self._stderr_tail()} (a slow server: set its timeout)"
            ) from None
        except BaseException as e:
            await self.close()
            raise ConnectionError(f"{_describe(e)}{self._stderr_tail()}") from None
        return self.tools

    def _transport(self) -> Any:
        config = self.config
        if config.transport == "http":
            return _http_streams(config.url, dict(config.headers))
        from mcp import StdioServerParameters
        from mcp.client.stdio import stdio_client

        # The server's stderr goes to a file of its own (a kernel's sys.stderr has no file descriptor to give a
        # subprocess), whose end a failure quotes.
        self._errlog = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")  # noqa: SIM115
        params = StdioServerParameters(
            command=config.command, args=list(config.args), env=dict(config.env) if config.env else None,
            cwd=config.cwd,
        )  # fmt: skip
        return stdio_client(params, errlog=self._errlog)

    async def _hold(self, ready: asyncio.Future[None], stop: asyncio.Event) -> None:
        """The connection's own task: enter the transport and the session, list the tools, then hold them open
        until ``stop``; leaves both in this task, as anyio requires."""
        from mcp import ClientSession

        try:
            async with self._transport() as streams, ClientSession(streams[0], streams[1]) as session:
                await session.initialize()
                self.tools = await _list_tools(session)
                self._session = session
                ready.set_result(None)
                await stop.wait()
        except Exception as e:  # failing to connect is the caller's error; a break later closes the connection
            if not ready.done():
                ready.set_exception(e)
        finally:
            self._session = None

    def _stderr_tail(self, lines: int = 5) -> str:
        if self._errlog is None:
            return ""
        try:
            self._errlog.flush()
            self._errlog.seek(0)
            tail = [line.rstrip() for line in self._errlog.read().splitlines() if line.strip()][-lines:]
        except (OSError, ValueError):
            return ""
        return "; its stderr ends: " + " / ".join(tail) if tail else ""

    async def close(self) -> None:
        """Close the connection (on its loop, from any loop); the server's subprocess ends with it."""
        task, stop, loop, open_ = self._task, self._stop, self.loop, self._session is not None
        self._task = self._stop = None
        self._session = None
        if task is not None and stop is not None and loop is not None and not loop.is_closed() and not task.done():

            async def end() -> None:
                # An open connection is left as it was entered; one still connecting (or stuck) is cancelled.
                stop.set() if open_ else task.cancel()
                with contextlib.suppress(BaseException):
                    await asyncio.wait_for(task, 10)

            if loop is asyncio.get_running_loop():
                await end()
            elif loop.is_running():
                with contextlib.suppress(BaseException):
                    await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(end(), loop))
        if self._errlog is not None:
            self._errlog.close()
            self._errlog = None

    # --- calls ----------------------------------------------------------------------------------------------

    async def call(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """Call ``tool`` with ``arguments``; its ``CallToolResult`` as MCP's JSON. Run on the connection's loop
        (handed over from another running loop); a connection never opened, or open on a loop that is gone, is
        opened here."""
        home = self.loop
        if home is not None and home is not asyncio.get_running_loop() and home.is_running():
            future = asyncio.run_coroutine_threadsafe(self._call_here(tool, arguments), home)
            try:
                return await asyncio.wrap_future(future)
            except asyncio.CancelledError:
                future.cancel()
                raise
        return await self._call_here(tool, arguments)

    async def _call_here(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        if not self.connected or self.loop is not asyncio.get_running_loop():
            await self.connect()
        limit = self.config.tool_timeout
        try:
            result = await asyncio.wait_for(self._session.call_tool(tool, arguments), limit)
        except asyncio.TimeoutError:
            await self.close()  # (a server gone away may leave a call unanswered: the next call connects again)
            raise ToolError(
                f"MCP server {self.name!r}: {tool} gave no result within {limit:g} s (its toolTimeout)"
            ) from None
        except Exception as e:
            if not _is_protocol_error(e):
                await self.close()  # a broken connection: the next call opens a new one
            raise ToolError(f"MCP server {self.name!r}: {_describe(e)}") from None
        dumped: dict[str, Any] = result.model_dump(mode="json", by_alias=True, exclude_none=True)
        return dumped


# --- results and tools ------------------------------------------------------------------------------------------


def _block_text(block: dict[str, Any]) -> str:
    kind = block.get("type")
    if kind == "resource":
        resource = block.get("resource") or {}
        if "text" in resource:
            return str(resource["text"])
        return f"[resource {resource.get('uri', '')} ({resource.get('mimeType', 'binary')}), not shown]"
    if kind == "resource_link":
        return f"[resource link: {block.get('name', '')} {block.get('uri', '')}]".replace("  ", " ")
    if kind == "audio":
        return f"[audio ({block.get('mimeType', '?')}), not shown]"
    return f"[{kind} content, not shown]"


def tool_result(server: str, tool: str, result: dict[str, Any]) -> AgentToolResult:
    """An MCP ``CallToolResult`` (its JSON) as the agent's tool result; ``isError``: :class:`ToolError` with its
    text (the model reads it as an error result)."""
    content: list[TextContent | ImageContent] = []
    for block in result.get("content") or []:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text":
            content.append(TextContent(text=str(block.get("text", ""))))
        elif block.get("type") == "image" and block.get("data"):
            content.append(ImageContent(data=str(block["data"]), mime_type=str(block.get("mimeType", "image/png"))))
        else:
            content.append(TextContent(text=_block_text(block)))
    structured = result.get("structuredContent")
    if not content and structured is not None:
        content.append(TextContent(text=json.dumps(structured, ensure_ascii=False)))
    if result.get("isError"):
        text = "\n".join(b.text for b in content if isinstance(b, TextContent))
        raise ToolError(text or f"{tool} failed (MCP server {server!r} gave no message)")
    details: dict[str, Any] = {"mcpServer": server, "mcpTool": tool}
    if structured is not None:
        details["structuredContent"] = structured
    return AgentToolResult(content=content or [TextContent(text="(no output)")], details=details)


def _factory(server: McpServer, spec: dict[str, Any], name: str) -> ToolFactory:
    tool = str(spec["name"])
    description = str(spec.get("description") or spec.get("title") or f"{tool} (MCP server {server.name})")
    parameters = spec.get("inputSchema") or {"type": "object", "properties": {}}

    async def execute(tool_call_id: str, params: dict[str, Any], signal: Any = None, on_update: Any = None) -> Any:
        result = await abortable(server.call(tool, params), signal)
        return tool_result(server.name, tool, result)

    def make(cwd: str | os.PathLike[str]) -> AgentTool:
        return AgentTool(name=name, description=description, parameters=parameters, execute=execute,
                         label=f"{server.name}: {tool}")  # fmt: skip

    make.__name__ = make.__qualname__ = name
    return make


# --- the servers of the config ----------------------------------------------------------------------------------


@dataclass
class McpLoad:
    """What :func:`load_mcp_tools` did."""

    path: str
    """The config file read."""
    tools: dict[str, list[str]] = field(default_factory=dict)
    """Server → the agent's names of its tools."""
    errors: list[str] = field(default_factory=list)
    """One line per server (or tool) left out, and why."""

    def describe(self) -> str:
        """One line: the tools each server gave."""
        parts = [f"{server} ({', '.join(names) or 'no tools'})" for server, names in self.tools.items()]
        return f"MCP tools from {self.path}: {'; '.join(parts)}" if parts else f"no MCP tools from {self.path}"


_servers: dict[str, McpServer] = {}
_registered: dict[str, str] = {}  # tool name → server
_lock = threading.Lock()
_own_loop: asyncio.AbstractEventLoop | None = None


def _default_loop() -> asyncio.AbstractEventLoop:
    """A loop of this module's on a daemon thread, for a process without one given (not a notebook)."""
    global _own_loop
    with _lock:
        if _own_loop is None or _own_loop.is_closed():
            _own_loop = asyncio.new_event_loop()
            threading.Thread(target=_own_loop.run_forever, name="pi-notebook-mcp", daemon=True).start()
        return _own_loop


def mcp_servers() -> dict[str, McpServer]:
    """The servers :func:`load_mcp_tools` connected, by name."""
    with _lock:
        return dict(_servers)


def close_mcp_servers(timeout: float = 10.0) -> None:
    """Unregister the MCP tools and close their servers' connections."""
    with _lock:
        servers, registered = list(_servers.values()), dict(_registered)
        _servers.clear()
        _registered.clear()
    for name in registered:
        with contextlib.suppress(ToolRegistryError):
            unregister_tool(name)
    for server in servers:
        loop = server.loop
        if loop is not None and loop.is_running() and not _on_loop(loop):
            with contextlib.suppress(Exception):
                asyncio.run_coroutine_threadsafe(server.close(), loop).result(timeout)


def _on_loop(loop: asyncio.AbstractEventLoop) -> bool:
    try:
        return asyncio.get_running_loop() is loop
    except RuntimeError:
        return False


async def _connect_all(servers: list[McpServer]) -> list[BaseException | None]:
    async def one(server: McpServer) -> BaseException | None:
        try:
            await server.connect()
        except Exception as e:
            return e
        return None

    return list(await asyncio.gather(*(one(s) for s in servers)))


def load_mcp_tools(
    path: str | os.PathLike[str] | None = None,
    *,
    loop: asyncio.AbstractEventLoop | None = None,
    warn: Callable[[str], None] | None = None,
) -> McpLoad:
    """Connect to the servers of the config file (``path``, else ``$PI_NOTEBOOK_MCP_CONFIG``, else
    ``~/.pi_notebook/mcp.json``) on ``loop`` (a loop running on another thread; default: one of this module's),
    all at once, and register each server's tools as ``<server>_<tool>``. Servers connected by an earlier call are
    closed and their tools unregistered first. A server that fails (or a config entry that is wrong, a tool name
    taken) is one line to ``warn``, and the others stand. No config file: nothing. Call it from synchronous code."""
    say = warn or (lambda text: None)
    config = read_mcp_config(path)
    report = McpLoad(str(config.path))
    close_mcp_servers()
    for problem in config.errors:
        say(problem)
        report.errors.append(problem)
    if not config.servers:
        return report
    try:
        import mcp  # noqa: F401 - the optional extra
    except ImportError:
        line = f"{config.path} lists MCP servers, but the mcp package is not installed: {INSTALL_HINT}"
        say(line)
        report.errors.append(line)
        return report
    target = loop or _default_loop()
    if _on_loop(target):
        raise RuntimeError("load_mcp_tools waits for the servers: call it off the loop it connects them on")
    servers = [McpServer(c) for c in config.servers]
    wait = max(c.timeout for c in config.servers) + 15
    errors = asyncio.run_coroutine_threadsafe(_connect_all(servers), target).result(wait)
    for server, error in zip(servers, errors, strict=True):
        if error is not None:
            line = f"MCP server {server.name!r} ({_where(server.config)}) failed, its tools left out: {error}"
            say(line)
            report.errors.append(line)
            continue
        report.tools[server.name] = _register(server, say, report)
        with _lock:
            _servers[server.name] = server
    return report


def _where(config: McpServerConfig) -> str:
    return config.url if config.transport == "http" else " ".join([config.command, *config.args])[:120]


def _register(server: McpServer, say: Callable[[str], None], report: McpLoad) -> list[str]:
    names: list[str] = []
    for spec in server.tools:
        if not isinstance(spec, dict) or not spec.get("name"):
            continue
        name = mcp_tool_name(server.name, str(spec["name"]))
        read_only = bool((spec.get("annotations") or {}).get("readOnlyHint") is True)
        try:
            registered_tool(name)
        except ToolRegistryError:
            register_tool(name, _factory(server, spec, name), read_only=read_only, default=True)
            with _lock:
                _registered[name] = server.name
            names.append(name)
            continue
        line = f"MCP server {server.name!r}: its tool {spec['name']!r} is left out: the name {name!r} is taken"
        say(line)
        report.errors.append(line)
    return names
