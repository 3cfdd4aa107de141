"""Lesson 12 (``notebooks/12-streaming-and-steering.ipynb``): the events of a run; steering and follow-ups.

:func:`event_line` and :func:`collapsed` print a run's events; the ``check_*`` functions check the lesson's three
exercises.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..agent_core import Agent, AgentTool, AgentToolResult
from ..ai import ToolResultMessage, UserMessage
from .exercise import expect, report, unanswered
from .lesson11 import run_scripted, scripted_calls


def event_line(event: Any) -> str:
    """One agent event in a few words: its type, and the role or tool it is about."""
    message = getattr(event, "message", None)
    if event.type.startswith("message_") and message is not None:
        return f"{event.type} {message.role}"
    if event.type.startswith("tool_execution_"):
        return f"{event.type} {event.tool_name}"
    return event.type


def collapsed(lines: Iterable[str]) -> list[str]:
    """``lines`` with each run of the same line said once, counted: ``message_update assistant ×4``."""
    out: list[tuple[str, int]] = []
    for line in lines:
        if out and out[-1][0] == line:
            out[-1] = (line, out[-1][1] + 1)
        else:
            out.append((line, 1))
    return [line if n == 1 else f"{line} ×{n}" for line, n in out]


def history_lines(messages: Iterable[Any]) -> list[str]:
    """Each message as its role and the start of its text (tool calls by name and arguments)."""
    lines = []
    for m in messages:
        content = m.content if isinstance(m.content, list) else [m.content]
        parts = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif block.type == "text":
                parts.append(block.text)
            elif block.type == "toolCall":
                parts.append(f"{block.name}({block.arguments})")
        lines.append(f"{m.role:<10} {' | '.join(parts)[:70]}")
    return lines


# --- exercise 1: the events of a plain answer ------------------------------------------------------------


def _events_of_plain_answer() -> list[str]:
    seen: list[str] = []
    run_scripted(
        ["Plums cost 95 cents."], "What do plums cost?", setup=lambda a: a.subscribe(lambda e: seen.append(e.type))
    )
    return [t for t in seen if t != "message_update"]


def check_plain_run(answer: Any) -> None:
    """Exercise 1: ``answer`` lists the event types of a run whose model answers in text, without
    ``message_update``."""
    name = "Exercise 1 (the events of a plain answer)"
    if unanswered(name, answer):
        return
    expect(name, isinstance(answer, (list, tuple)) and all(isinstance(t, str) for t in answer),
           'answer with a list of event types, such as ["agent_start", ...]')  # fmt: skip
    truth = _events_of_plain_answer()
    expect(name, "message_update" not in answer, "leave message_update out: how many there are depends on chunking")
    for i, (given, want) in enumerate(zip(answer, truth, strict=False)):
        expect(
            name, given == want, f"event {i} is {want!r}, not {given!r}",
            "the prompt is a message too: it starts and ends before the reply does." if want.startswith("message")
            else "a run opens with agent_start and a turn; it closes them in the reverse order.",
        )  # fmt: skip
    expect(name, len(answer) == len(truth),
           f"the run has {len(truth)} events (without message_update), not {len(answer)}")  # fmt: skip
    report(name, " → ".join(truth) + ".")


# --- exercise 2: what a steering message skips -----------------------------------------------------------

FILES = ("a.log", "b.log", "c.log")
"""Exercise 2: the reply reads these three files, in one reply."""


def _read_file(tool_call_id: str, params: dict[str, Any], signal: Any, on_update: Any) -> AgentToolResult:
    return AgentToolResult.text(f"contents of {params['path']}")


READ_TOOL = AgentTool(
    name="read_file",
    description="Read a file.",
    parameters={"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
    execute=_read_file,
)


def skipped_paths(tool_execution: str) -> list[str]:
    """The files whose calls are skipped when the user steers as the first call's tool ends."""
    from ..ai import faux

    def setup(agent: Agent) -> None:
        def on_event(event: Any) -> None:
            if event.type == "tool_execution_end" and event.tool_call_id == "call_0":
                agent.steer(UserMessage(content="Only a.log matters."))

        agent.subscribe(on_event)

    reply = faux.message([faux.tool_call("read_file", {"path": p}, id=f"call_{i}") for i, p in enumerate(FILES)])
    agent = run_scripted([reply, "a.log is fine."], setup=setup, tools=[READ_TOOL], tool_execution=tool_execution)
    return [
        FILES[int(m.tool_call_id.split("_")[1])]
        for m in agent.messages
        if isinstance(m, ToolResultMessage) and "Skipped" in str(getattr(m.content[0], "text", ""))
    ]


def check_skipped(answer: Any) -> None:
    """Exercise 2: ``answer`` maps ``"sequential"`` and ``"parallel"`` to the files whose calls are skipped."""
    name = "Exercise 2 (what a steering message skips)"
    if unanswered(name, answer, *(answer.values() if isinstance(answer, dict) else ())):
        return
    expect(name, isinstance(answer, dict) and set(answer) == {"sequential", "parallel"},
           'answer with {"sequential": [...], "parallel": [...]}: lists of file names')  # fmt: skip
    for mode, hint in (
        ("sequential", "one call at a time, and the queue is read after each one."),
        ("parallel", "every call is prepared (and the queue read) before any runs; they then run together."),
    ):
        truth = skipped_paths(mode)
        expect(name, sorted(answer[mode]) == truth, f"{mode}: the skipped calls are {truth}, not {answer[mode]}", hint)
    report(name, "sequential skips the calls after the one that was running; parallel had started them all.")


# --- exercise 3: one at a time, or all -------------------------------------------------------------------


def calls_with_follow_ups(mode: str) -> int:
    """How many model calls a run makes when two follow-ups were queued before it, in ``mode``."""

    def setup(agent: Agent) -> None:
        agent.follow_up(UserMessage(content="And pears?"))
        agent.follow_up(UserMessage(content="And kiwis?"))

    run_scripted(["Plums: 95 cents.", "Pears: 80 cents.", "No kiwis."], setup=setup, follow_up_mode=mode)
    return len(scripted_calls())


def check_follow_up_calls(answer: Any) -> None:
    """Exercise 3: ``answer`` maps each follow-up mode to the number of model calls of the run."""
    name = "Exercise 3 (one at a time, or all)"
    if unanswered(name, answer, *(answer.values() if isinstance(answer, dict) else ())):
        return
    expect(name, isinstance(answer, dict) and set(answer) == {"one-at-a-time", "all"},
           'answer with {"one-at-a-time": N, "all": N}')  # fmt: skip
    for mode in ("one-at-a-time", "all"):
        truth = calls_with_follow_ups(mode)
        expect(
            name, answer[mode] == truth, f"{mode}: the run makes {truth} model calls, not {answer[mode]}",
            "the first call answers the prompt; each time the agent would stop, the queue gives it one message "
            "(one-at-a-time) or every queued message at once (all).",
        )  # fmt: skip
    report(name, "one-at-a-time: a call per follow-up; all: both in one call.")
