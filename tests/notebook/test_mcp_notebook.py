"""MCP tools in the notebook (#26): ``%load_ext pi_notebook`` connects the servers of the config file (named by
``PI_NOTEBOOK_MCP_CONFIG``) on the agent's background loop, a real MCP server over stdio and another over
streamable HTTP on 127.0.0.1; a scripted model's ``%%agent`` run calls a tool of each; the results are in the session
and the inspector's request bodies list the tools, as a built-in's are."""

from __future__ import annotations

import json

import pytest

from pi_notebook.ai import faux
from pi_notebook.coding_agent.tools import tool_names
from pi_notebook.notebook.inspector import inspect
from pi_notebook.notebook.runner import background_loop
from tests.coding_agent.test_mcp import HttpServer, stdio, write_config

pytest.importorskip("mcp", reason="the optional extra: pip install -e '.[dev]' (or '.[mcp]')")

FAUX = "faux (faux-1)"
ANTHROPIC = "anthropic-messages (claude-sonnet-4-5)"


@pytest.fixture
def http_server():
    server = HttpServer()
    yield server
    server.stop()


def test_mcp_tools_are_called_recorded_and_inspected_like_built_ins(shell, tmp_path, http_server, monkeypatch, capsys):
    monkeypatch.setenv("DEMO_TOKEN", str(http_server.port))
    config = write_config(tmp_path / "mcp.json", {
        "srv": stdio(),
        "web": {"url": http_server.url, "headers": {"Authorization": "Bearer ${DEMO_TOKEN}"}},
    })  # fmt: skip
    monkeypatch.setenv("PI_NOTEBOOK_MCP_CONFIG", str(config))
    shell.ip.run_line_magic("reload_ext", "pi_notebook")
    said = capsys.readouterr().out
    assert (
        f"pi_notebook: MCP tools from {config}: srv (srv_add, srv_shout, srv_refuse); "
        "web (web_add, web_shout, web_refuse)"
    ) in said
    from pi_notebook.coding_agent.mcp import mcp_servers

    assert {name: s.loop for name, s in mcp_servers().items()} == {"srv": background_loop().loop,
                                                                    "web": background_loop().loop}  # fmt: skip

    faux.set_responses([
        [faux.tool_call("srv_add", {"a": 20, "b": 22}), faux.tool_call("web_shout", {"text": "done"})],
        "42, and DONE.",
    ])  # fmt: skip
    shell.agent("Add 20 and 22, then shout done.", "--model faux/faux-1 --tools read,srv_add,web_shout")
    session = shell.session
    results = [m for m in session.messages if m.role == "toolResult"]
    assert [(r.tool_name, r.content[0].text, r.is_error) for r in results] == [
        ("srv_add", "42", False), ("web_shout", "DONE", False),
    ]  # fmt: skip
    assert session.messages[-1].content[0].text == "42, and DONE."

    w = inspect(session)
    assert [t["name"] for t in w.requests[FAUX]["tools"]] == ["read", "srv_add", "web_shout"]
    anthropic_tools = {t["name"]: t for t in w.requests[ANTHROPIC]["tools"]}
    assert anthropic_tools["srv_add"]["input_schema"]["required"] == ["a", "b"]
    assert anthropic_tools["web_shout"]["description"] == "The text in capitals."
    rows = [r for r in w.rows if r["role"] == "toolResult"]
    assert [json.dumps(r["agent"]["content"]) for r in rows] == [
        json.dumps([{"type": "text", "text": "42"}]), json.dumps([{"type": "text", "text": "DONE"}]),
    ]  # fmt: skip
    w.close()

    # %unload_ext closes the servers and their tools go
    shell.ip.run_line_magic("unload_ext", "pi_notebook")
    assert not {"srv_add", "web_shout"} & set(tool_names())
    shell.ip.run_line_magic("load_ext", "pi_notebook")  # (the fixture unloads it again)


def test_a_server_that_fails_is_one_line_and_the_extension_loads(shell, tmp_path, monkeypatch, capsys):
    config = write_config(tmp_path / "mcp.json", {"gone": {"url": "http://127.0.0.1:9/mcp", "timeout": 5}})
    monkeypatch.setenv("PI_NOTEBOOK_MCP_CONFIG", str(config))
    shell.ip.run_line_magic("reload_ext", "pi_notebook")
    lines = [line for line in capsys.readouterr().out.splitlines() if "MCP" in line]
    assert lines == [
        "pi_notebook: MCP server 'gone' (http://127.0.0.1:9/mcp) failed, its tools left out: "
        "ConnectError: All connection attempts failed"
    ]
    faux.set_responses(["still here"])
    shell.agent("hello")
    assert shell.session.messages[-1].content[0].text == "still here"
