"""The tool sets, Pi's names and parameter schemas, and path resolution."""

from __future__ import annotations

import jsonschema
import pytest

from pi_notebook.agent_core.tool import ToolArgumentsError, validate_tool_arguments
from pi_notebook.coding_agent.tools import (
    TOOL_FACTORIES,
    all_tools,
    coding_tools,
    create_read_tool,
    read_only_tools,
)
from pi_notebook.coding_agent.tools.paths import expand_path, resolve_to_cwd

from .helpers import call, text_of

PI_PARAMETERS = {
    "read": (["path"], ["limit", "offset", "path"]),
    "bash": (["command"], ["command", "timeout"]),
    "edit": (["path", "oldText", "newText"], ["newText", "oldText", "path"]),
    "write": (["path", "content"], ["content", "path"]),
    "grep": (["pattern"], ["context", "glob", "ignoreCase", "limit", "literal", "path", "pattern"]),
    "find": (["pattern"], ["limit", "path", "pattern"]),
    "ls": ([], ["limit", "path"]),
}


def test_sets_match_pi(tmp_path):
    assert [t.name for t in coding_tools(tmp_path)] == ["read", "bash", "edit", "write"]
    assert [t.name for t in read_only_tools(tmp_path)] == ["read", "grep", "find", "ls"]
    assert [t.name for t in all_tools(tmp_path)] == list(TOOL_FACTORIES) == list(PI_PARAMETERS)


@pytest.mark.parametrize("name", list(PI_PARAMETERS))
def test_names_labels_and_schemas(tmp_path, name):
    tool = TOOL_FACTORIES[name](tmp_path)
    required, properties = PI_PARAMETERS[name]
    assert (tool.name, tool.label) == (name, name)
    jsonschema.Draft7Validator.check_schema(tool.parameters)
    assert tool.parameters.get("required", []) == required
    assert sorted(tool.parameters["properties"]) == properties
    assert all(p["description"] for p in tool.parameters["properties"].values())
    assert tool.to_tool().description == tool.description


def test_arguments_are_coerced_and_checked(tmp_path):
    (tmp_path / "a.txt").write_text("1\n2\n3")
    read = create_read_tool(tmp_path)
    assert (
        text_of(call(read, path="a.txt", offset="2", limit="1"))
        == "2\n\n[1 more lines in file. Use offset=3 to continue.]"
    )
    with pytest.raises(ToolArgumentsError, match="must have required property 'path'"):
        validate_tool_arguments(read, {})


def test_path_resolution(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", "/home/someone")
    assert expand_path("@~/x\u2009y") == "/home/someone/x y"
    assert expand_path("~") == "/home/someone"
    assert expand_path("~user/x") == "~user/x"
    assert resolve_to_cwd("a/../b.txt", tmp_path) == str(tmp_path / "b.txt")
    assert resolve_to_cwd("/abs/p", tmp_path) == "/abs/p"
