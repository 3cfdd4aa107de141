"""Run a tool the way the agent loop does: validate the arguments, call it, keep its error text."""

from __future__ import annotations

import asyncio
from typing import Any

from pi_notebook.agent_core.tool import AgentTool, AgentToolResult, validate_tool_arguments


def run(coro: Any) -> Any:
    """Run a coroutine to completion on a fresh event loop."""
    return asyncio.run(coro)


def call(tool: AgentTool, signal: Any = None, on_update: Any = None, **params: Any) -> AgentToolResult:
    """Validate ``params`` against the tool's schema and run it."""
    args = validate_tool_arguments(tool, params)
    return run(tool.run("call_1", args, signal, on_update or (lambda _partial: None)))


def text_of(result: AgentToolResult) -> str:
    """The text of a result's first block."""
    return result.content[0].text


def error_of(tool: AgentTool, signal: Any = None, **params: Any) -> str:
    """The message the model would see when the tool fails (the loop uses ``str(exception)``)."""
    try:
        result = call(tool, signal=signal, **params)
    except Exception as exc:
        return str(exc)
    raise AssertionError(f"tool {tool.name} succeeded: {text_of(result)!r}")
