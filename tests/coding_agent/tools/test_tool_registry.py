"""An app's way in for tools: ``register_tool`` makes a tool known to ``--tools``/``tools=``, a run and the default
sets, as ``register_message_type`` does for a role; misuse raises one clear error. No notebook here."""

from __future__ import annotations

import asyncio

import pytest

from pi_notebook.agent_core import AgentTool, AgentToolResult
from pi_notebook.ai import faux
from pi_notebook.coding_agent import AgentSession, SessionSettings
from pi_notebook.coding_agent.run_policy import default_tools, parse_tools, plan_run
from pi_notebook.coding_agent.tools import (
    TOOL_FACTORIES,
    ToolRegistryError,
    make_tool,
    register_tool,
    registered_tool,
    tool_names,
    unregister_tool,
)


def word_count(cwd) -> AgentTool:
    async def execute(tool_call_id, params, signal=None, on_update=None):
        return AgentToolResult.text(f"{len(params['text'].split())} words")

    schema = {"type": "object", "properties": {"text": {"type": "string", "description": "Text"}}, "required": ["text"]}
    return AgentTool(name="word_count", description="Count words.", parameters=schema, execute=execute)


@pytest.fixture
def registered():
    register_tool("word_count", word_count, read_only=True, default=True)
    yield
    unregister_tool("word_count")


def test_pis_seven_tools_are_registered_like_any_other_in_pis_order():
    assert tool_names()[:7] == tuple(TOOL_FACTORIES) == ("read", "bash", "edit", "write", "grep", "find", "ls")
    assert [registered_tool(n).read_only for n in TOOL_FACTORIES] == [True, False, False, False, True, True, True]
    assert not any(registered_tool(n).default for n in TOOL_FACTORIES)  # Pi's defaults are run_policy's own


def test_a_registered_tool_is_known_to_tools_joins_the_defaults_and_runs(registered, tmp_path, fresh_faux):
    assert "word_count" in parse_tools("read,word_count")
    assert default_tools().endswith(",word_count") and default_tools(small=True).endswith(",word_count")
    assert plan_run(SessionSettings(), faux.model(), tools=["word_count"]).tools(str(tmp_path))[0].name == "word_count"
    session = AgentSession.open(tmp_path / "s", SessionSettings(default_model="faux/faux-1"), cwd=str(tmp_path))
    try:
        faux.set_responses([[faux.tool_call("word_count", {"text": "one two three"})], "Three."])
        asyncio.run(session.prompt("How many words?", tools=["word_count"]))
        assert session.messages[-2].content[0].text == "3 words" and not session.messages[-2].is_error
    finally:
        session.close()


def test_a_tool_that_changes_things_joins_only_the_defaults_of_models_that_are_not_small(tmp_path):
    register_tool("deploy", word_count, read_only=False, default=True)
    try:
        assert "deploy" in default_tools().split(",") and "deploy" not in default_tools(small=True).split(",")
    finally:
        unregister_tool("deploy")
    assert "deploy" not in tool_names()


def test_misuse_raises_a_clear_error(registered, tmp_path):
    with pytest.raises(ToolRegistryError, match="use 1 to 64 letters"):
        register_tool("my tool", word_count, read_only=True)
    with pytest.raises(ToolRegistryError, match="'none' is taken"):
        register_tool("none", word_count, read_only=True)
    with pytest.raises(ToolRegistryError, match="factory must be callable"):
        register_tool("x", "not a factory", read_only=True)
    with pytest.raises(ToolRegistryError, match="read_only and default must be True or False"):
        register_tool("x", word_count, read_only="yes")
    with pytest.raises(TypeError):
        register_tool("x", word_count)  # read_only must be said
    register_tool("word_count", word_count, read_only=True, default=True)  # the same again: a no-op
    with pytest.raises(ToolRegistryError, match="'word_count' is already registered; pass replace=True"):
        register_tool("word_count", word_count, read_only=False)
    with pytest.raises(ToolRegistryError, match="no tool 'nope' is registered"):
        unregister_tool("nope")
    with pytest.raises(ToolRegistryError, match=r"unknown tool 'nope'; choose from read, bash"):
        make_tool("nope", tmp_path)
    register_tool("counter", word_count, read_only=True)
    try:
        with pytest.raises(ToolRegistryError, match="'counter': its factory made a tool named 'word_count'"):
            make_tool("counter", tmp_path)
    finally:
        unregister_tool("counter")
