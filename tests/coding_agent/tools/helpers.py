"""Run a tool the way the agent loop does: validate the arguments, call it, keep its error text."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
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


def run_bounded(args: list[str], timeout: float, what: str, **popen: Any) -> subprocess.CompletedProcess[str]:
    """Run ``args`` in a process group of its own; after ``timeout`` seconds kill the whole group (what it started
    too, such as an rg waiting on a FIFO) and fail with ``what`` in the message. Never waits longer."""
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                            **popen)  # fmt: skip
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise AssertionError(f"{what} still ran after {timeout} s: it waits, or reads without end") from None
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)  # anything it left running in its group
    return subprocess.CompletedProcess(args, proc.returncode, stdout, stderr)
