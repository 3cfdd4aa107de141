"""MCP tools (#26, the optional extra ``mcp``): the config file, the names, the results, and a real MCP server of the
official SDK (``mcp_demo_server.py``) over stdio and over streamable HTTP on 127.0.0.1, whose tool a scripted model
calls through an ``AgentSession``. (In the notebook, with the inspector: tests/notebook/test_mcp_notebook.py.)"""

from __future__ import annotations

import asyncio
import json
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pi_notebook.ai import faux
from pi_notebook.coding_agent import AgentSession, SessionSettings
from pi_notebook.coding_agent.mcp import close_mcp_servers, load_mcp_tools, mcp_tool_name, tool_result
from pi_notebook.coding_agent.mcp_config import CONFIG_ENV, mcp_config_path, read_mcp_config
from pi_notebook.coding_agent.tools import ToolError, registered_tool, tool_names

pytest.importorskip("mcp", reason="the optional extra: pip install -e '.[dev]' (or '.[mcp]')")

SERVER = Path(__file__).with_name("mcp_demo_server.py")


def write_config(path: Path, servers: dict) -> Path:
    path.write_text(json.dumps({"mcpServers": servers}))
    return path


def stdio(*extra: str) -> dict:
    return {"command": sys.executable, "args": [str(SERVER), "stdio", *extra]}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class HttpServer:
    """mcp_demo_server.py serving streamable HTTP on 127.0.0.1 (requiring ``Authorization: Bearer <port>``)."""

    def __init__(self) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self.start()

    def start(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, str(SERVER), "http", str(self.port), "--auth"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            assert self.process.poll() is None, "the MCP server exited"
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.1)
        raise AssertionError("the MCP server did not listen within 60 s")

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(10)


@pytest.fixture
def http_server():
    server = HttpServer()
    yield server
    server.stop()


@pytest.fixture
def mcp_tools():
    """Whatever a test connects is closed and unregistered after it."""
    yield
    close_mcp_servers()


# --- the config file --------------------------------------------------------------------------------------------


def test_the_config_file_is_named_by_the_environment_or_in_the_home_folder(tmp_path):
    assert mcp_config_path({}) == Path("~/.pi_notebook/mcp.json").expanduser()
    assert mcp_config_path({CONFIG_ENV: str(tmp_path / "x.json")}) == tmp_path / "x.json"
    missing = read_mcp_config(tmp_path / "none.json")
    assert (missing.exists, missing.servers, missing.errors) == (False, [], [])


def test_each_entry_of_the_common_shape_is_read_or_said_wrong_on_its_own(tmp_path):
    path = write_config(tmp_path / "mcp.json", {
        "files": {"command": "npx", "args": ["-y", "server", "${HOME_DIR:-/data}"], "env": {"TOKEN": "${TOKEN}"}},
        "search": {
            "type": "http", "url": "https://mcp.example/mcp", "headers": {"Authorization": "Bearer ${env:TOKEN}"},
        },
        "plain": {"url": "http://127.0.0.1:1/mcp", "timeout": 5},
        "off": {"command": "x", "disabled": True},
        "old": {"type": "sse", "url": "http://127.0.0.1:1/sse"},
        "nothing": {"args": []},
        "secret": {"url": "http://127.0.0.1:1/mcp", "headers": {"X-Key": "${NOT_SET}"}},
        "slow": {"command": "x", "timeout": "long"},
        "slower": {"command": "x", "toolTimeout": 0},
    })  # fmt: skip
    config = read_mcp_config(path, {"TOKEN": "t0k"})
    files, search, plain = config.servers
    assert (files.transport, files.command, files.args, files.env) == (
        "stdio",
        "npx",
        ("-y", "server", "/data"),
        {"TOKEN": "t0k"},
    )
    assert (search.transport, search.url, dict(search.headers)) == (
        "http",
        "https://mcp.example/mcp",
        {"Authorization": "Bearer t0k"},
    )
    assert (plain.transport, plain.timeout, plain.tool_timeout) == ("http", 5.0, 300.0)
    assert len(config.errors) == 5
    old, nothing, secret, slow, slower = config.errors
    assert "'old'" in old and "SSE transport (deprecated in MCP) is not supported" in old
    assert "'nothing'" in nothing and "needs a command" in nothing
    assert "'secret'" in secret and "${NOT_SET}, which is not set in the environment" in secret
    assert "'slow'" in slow and "timeout must be a number of seconds" in slow
    assert "'slower'" in slower and "toolTimeout must be a number of seconds, not 0" in slower


@pytest.mark.parametrize(
    ("text", "said"),
    [("{", "is not JSON"), ('{"servers": {}}', 'holds no "mcpServers" object'), ('{"mcpServers": []}', "holds no")],
)
def test_a_file_that_is_not_the_shape_is_one_line(tmp_path, text, said):
    (tmp_path / "mcp.json").write_text(text)
    config = read_mcp_config(tmp_path / "mcp.json")
    assert config.exists and config.servers == [] and len(config.errors) == 1 and said in config.errors[0]


def test_tool_names_are_what_every_provider_accepts():
    assert mcp_tool_name("srv", "add") == "srv_add"
    assert mcp_tool_name("my server", "get.page") == "my_server_get_page"
    long = mcp_tool_name("s" * 40, "t" * 40)
    other = mcp_tool_name("s" * 40, "t" * 39 + "u")
    assert len(long) == 64 and long != other
    for name in ("srv_add", "my_server_get_page", long):
        assert re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", name)


def test_results_become_text_images_and_errors():
    result = tool_result("srv", "t", {
        "content": [
            {"type": "text", "text": "hi"},
            {"type": "image", "data": "iVBOR", "mimeType": "image/png"},
            {"type": "resource", "resource": {"uri": "file:///a.txt", "text": "inside"}},
            {"type": "resource_link", "uri": "file:///b", "name": "b"},
            {"type": "audio", "data": "x", "mimeType": "audio/wav"},
        ],
        "structuredContent": {"n": 1},
    })  # fmt: skip
    assert [getattr(b, "text", None) or b.mime_type for b in result.content] == [
        "hi", "image/png", "inside", "[resource link: b file:///b]", "[audio (audio/wav), not shown]",
    ]  # fmt: skip
    assert result.details == {"mcpServer": "srv", "mcpTool": "t", "structuredContent": {"n": 1}}
    assert tool_result("srv", "t", {"content": [], "structuredContent": {"n": 1}}).content[0].text == '{"n": 1}'
    with pytest.raises(ToolError, match=r"^bad input$"):
        tool_result("srv", "t", {"content": [{"type": "text", "text": "bad input"}], "isError": True})


# --- a real server --------------------------------------------------------------------------------------------


@pytest.fixture
def session(tmp_path, fresh_faux):
    opened = AgentSession.open(tmp_path / "sessions", SessionSettings(default_model="faux/faux-1"), cwd=str(tmp_path))
    yield opened
    opened.close()


def test_a_stdio_servers_tool_is_called_by_the_model_and_recorded(tmp_path, session, mcp_tools):
    said: list[str] = []
    path = write_config(tmp_path / "mcp.json", {
        "srv": stdio(),
        "dead": {"command": sys.executable, "args": ["-c", "import sys; print('boom: no token', file=sys.stderr)"]},
    })  # fmt: skip
    loaded = load_mcp_tools(path, warn=said.append)
    assert loaded.tools == {"srv": ["srv_add", "srv_shout", "srv_refuse"]}
    assert loaded.describe() == f"MCP tools from {path}: srv (srv_add, srv_shout, srv_refuse)"
    [dead] = said
    assert dead.startswith("MCP server 'dead' (") and "failed, its tools left out" in dead and "boom: no token" in dead
    assert registered_tool("srv_shout").read_only and not registered_tool("srv_add").read_only  # readOnlyHint
    assert registered_tool("srv_add").default

    faux.set_responses([
        [faux.tool_call("srv_add", {"a": 2, "b": 3}), faux.tool_call("srv_refuse", {"reason": "no"})],
        "2 + 3 = 5.",
    ])  # fmt: skip
    # asyncio.run: a loop of its own; the connection lives on the MCP module's loop, and the call is handed over
    new = asyncio.run(session.prompt("Add 2 and 3.", tools=["srv_add", "srv_refuse"]))
    assert [m.role for m in new] == ["user", "assistant", "toolResult", "toolResult", "assistant"]
    added, refused = new[2], new[3]
    assert (added.tool_name, added.is_error, added.content[0].text) == ("srv_add", False, "5")
    assert added.details == {"mcpServer": "srv", "mcpTool": "add", "structuredContent": {"result": 5}}
    assert refused.is_error and "refuse" in refused.content[0].text
    offered = faux.calls[0].tools
    assert [t.name for t in offered] == ["srv_add", "srv_refuse"]
    assert offered[0].description == "Add two integers and return the sum."
    assert offered[0].parameters["required"] == ["a", "b"]
    # a session reopened reads the calls back as any tool's
    assert [m.role for m in session.messages][-3:] == ["toolResult", "toolResult", "assistant"]

    close_mcp_servers()
    assert "srv_add" not in tool_names()


def test_a_streamable_http_server_gets_the_configs_headers(tmp_path, session, http_server, mcp_tools, monkeypatch):
    monkeypatch.setenv("DEMO_TOKEN", str(http_server.port))
    path = write_config(tmp_path / "mcp.json", {
        "web": {"url": http_server.url, "headers": {"Authorization": "Bearer ${DEMO_TOKEN}"}},
        "nokey": {"url": http_server.url},
    })  # fmt: skip
    said: list[str] = []
    loaded = load_mcp_tools(path, warn=said.append)
    assert loaded.tools == {"web": ["web_add", "web_shout", "web_refuse"]}
    assert len(said) == 1 and "MCP server 'nokey'" in said[0]  # the server refuses a request without the header
    faux.set_responses([faux.tool_call("web_shout", {"text": "quiet"}), "It says QUIET."])
    new = asyncio.run(session.prompt("Shout quiet.", tools=["web_shout"]))
    assert new[2].content[0].text == "QUIET" and not new[2].is_error


def test_a_server_that_stopped_is_connected_again_at_the_next_call(
    tmp_path, session, http_server, mcp_tools, monkeypatch
):
    monkeypatch.setenv("DEMO_TOKEN", str(http_server.port))
    path = write_config(tmp_path / "mcp.json", {
        # (mcp 1.x leaves a call to a server gone away unanswered: the toolTimeout ends it)
        "web": {"url": http_server.url, "headers": {"Authorization": "Bearer ${DEMO_TOKEN}"}, "toolTimeout": 5},
    })  # fmt: skip
    load_mcp_tools(path)
    http_server.stop()
    faux.set_responses([faux.tool_call("web_add", {"a": 1, "b": 1}), "It failed."])
    new = asyncio.run(session.prompt("Add.", tools=["web_add"]))
    assert new[2].is_error and "MCP server 'web'" in new[2].content[0].text
    http_server.start()  # the same port again
    faux.set_responses([faux.tool_call("web_add", {"a": 1, "b": 1}), "2."])
    again = asyncio.run(session.prompt("Add again.", tools=["web_add"]))
    assert again[2].content[0].text == "2" and not again[2].is_error


def test_no_config_file_is_no_tools_and_no_sdk_needed(tmp_path):
    loaded = load_mcp_tools(tmp_path / "none.json")
    assert loaded.tools == {} and loaded.errors == [] and loaded.describe().startswith("no MCP tools from")
