"""Lesson 1 (``notebooks/01-llm-roles.ipynb``): the three roles an LLM API understands.

:func:`show_json` is the lesson's display helper; the ``check_*`` functions check its three exercises.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import ValidationError

from ..ai import (
    AssistantMessage,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from .exercise import expect, report, unanswered

T0 = 1748568000000
"""A fixed timestamp (Unix ms), so the lesson's outputs are the same on every run."""

PIXEL = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
"""A 1×1 PNG, base64: the smallest picture a user message can carry."""


def show_json(message: Any) -> None:
    """Print ``message`` as Pi's JSON (camelCase), the form Pi stores and sends."""
    print(json.dumps(message.to_pi_json(), indent=2, ensure_ascii=False))


# --- exercise 1: answer a tool call -----------------------------------------------------------------------

GREP_CALL = AssistantMessage(
    content=[
        TextContent(text="I will search for the password check."),
        ToolCall(id="call_7", name="grep", arguments={"pattern": "check_hash"}),
    ],
    api="anthropic-messages", provider="anthropic", model="claude-sonnet-4-5", stop_reason="toolUse",
    timestamp=T0 + 10_000,
)  # fmt: skip
"""Exercise 1's reply: one tool call the learner answers."""

GREP_OUTPUT = "auth.py:2:    return check_hash(user, password)"


def check_tool_result(answer: Any) -> None:
    """Exercise 1: ``answer`` is the ToolResultMessage that answers :data:`GREP_CALL`'s call with
    :data:`GREP_OUTPUT`."""
    name = "Exercise 1 (answer a tool call)"
    if unanswered(name, answer):
        return
    expect(name, isinstance(answer, ToolResultMessage), f"the answer is a {type(answer).__name__}, not a "
           "ToolResultMessage", "a tool's output goes back to the model as ToolResultMessage(...).")  # fmt: skip
    call = GREP_CALL.content[1]
    assert isinstance(call, ToolCall)
    expect(
        name, answer.tool_call_id == call.id,
        f"tool_call_id is {answer.tool_call_id!r}: the model cannot tell which call this answers",
        "copy the id of the ToolCall in GREP_CALL.content[1].",
    )  # fmt: skip
    expect(name, answer.tool_name == call.name, f"tool_name is {answer.tool_name!r}, the call was to {call.name!r}")
    text = "".join(b.text for b in answer.content if isinstance(b, TextContent))
    expect(
        name, text == GREP_OUTPUT, f"the text the model reads is {text!r}, not the tool's output",
        "content is a list of blocks: [TextContent(text=GREP_OUTPUT)]. Structured extras go in details.",
    )  # fmt: skip
    expect(name, not answer.is_error, "is_error=True tells the model the tool failed; grep found a line")
    report(name, "the result names its call by id, so the loop can pair them.")


# --- exercise 2: which messages does the type system refuse? --------------------------------------------

CANDIDATES: dict[int, str] = {
    0: 'UserMessage(content="hi")',
    1: "UserMessage(content=[ImageContent(data=PIXEL, mime_type='image/png')])",
    2: "UserMessage(content=[ThinkingContent(thinking='...')])",
    3: "AssistantMessage(content=[ToolCall(id='c', name='ls', arguments={})], api='faux', provider='faux', "
    "model='faux-1')",
    4: "ToolResultMessage(tool_call_id='c', tool_name='ls', content=[ToolCall(id='c', name='ls', arguments={})])",
    5: "AssistantMessage(content=[ImageContent(data=PIXEL, mime_type='image/png')], api='faux', provider='faux', "
    "model='faux-1')",
}
"""Exercise 2's constructions, by number."""

_NAMES = {
    "UserMessage": UserMessage,
    "AssistantMessage": AssistantMessage,
    "ToolResultMessage": ToolResultMessage,
    "TextContent": TextContent,
    "ImageContent": ImageContent,
    "ThinkingContent": ThinkingContent,
    "ToolCall": ToolCall,
    "PIXEL": PIXEL,
}
_WHY = {
    0: "a user message's content may be a plain string",
    1: "a user message holds text and images: a screenshot is fine",
    2: "thinking is the model's: only an assistant message holds it",
    3: "a tool call is the model's request: an assistant message holds it",
    4: "a tool result holds text and images, never a call",
    5: "a reply holds text, thinking and tool calls; images come from users and tools",
}


def _refused() -> set[int]:
    refused = set()
    for number, source in CANDIDATES.items():
        try:
            eval(source, {"__builtins__": {}}, _NAMES)  # our own fixed strings, no input of the learner's
        except ValidationError:
            refused.add(number)
    return refused


def check_refused(answer: Any) -> None:
    """Exercise 2: ``answer`` is the set of :data:`CANDIDATES` numbers that pydantic refuses."""
    name = "Exercise 2 (what the types refuse)"
    if unanswered(name, answer):
        return
    expect(
        name, isinstance(answer, (set, list, tuple)) and all(isinstance(i, int) for i in answer),
        "answer with a set of numbers, such as {0, 3}",
    )  # fmt: skip
    refused = _refused()
    for number in sorted(set(answer) ^ refused):
        expect(name, number in CANDIDATES, f"there is no construction {number}: they are numbered 0 to 5")
        said = "refused" if number in refused else "accepted"
        expect(name, False, f"construction {number} is {said}: {_WHY[number]}.",
               "ask of each block: who produces it — the person, the model or a tool?")  # fmt: skip
    report(name, f"{sorted(refused)} are refused: each block belongs to the role that produces it.")


# --- exercise 3: what the loop does next -------------------------------------------------------------------


def _reply(stop: Any, *blocks: Any) -> AssistantMessage:
    return AssistantMessage(
        content=list(blocks), api="faux", provider="faux", model="faux-1", stop_reason=stop, timestamp=T0
    )


_LS = ToolCall(id="call_9", name="ls", arguments={})
REPLIES: dict[str, AssistantMessage] = {
    "A": _reply("toolUse", TextContent(text="Let me list the folder."), _LS),
    "B": _reply("stop", TextContent(text="The folder holds two files.")),
    "C": _reply("error", _LS),
    "D": _reply("aborted", TextContent(text="Let me")),
}
"""Exercise 3's replies, by letter."""


def next_step(reply: AssistantMessage) -> str:
    """What Pi's agent loop (``packages/agent/src/agent-loop.ts``) does after ``reply``: an ``error`` or
    ``aborted`` reply ends the run at once; otherwise the reply's tool calls run and the model is called again,
    and a reply without any ends the run (unless follow-up messages wait)."""
    if reply.stop_reason in ("error", "aborted"):
        return "end the run"
    return "run the tools" if any(isinstance(b, ToolCall) for b in reply.content) else "end the run"


def check_next_step(answer: Any) -> None:
    """Exercise 3: ``answer`` maps each of :data:`REPLIES` to ``"run the tools"`` or ``"end the run"``."""
    name = "Exercise 3 (what the loop does next)"
    if unanswered(name, answer):
        return
    expect(name, isinstance(answer, dict), "answer with a dict: {'A': 'run the tools' or 'end the run', ...}")
    expect(name, set(answer) == set(REPLIES), f"the keys are {sorted(answer)}; give all four: {sorted(REPLIES)}")
    for letter, reply in REPLIES.items():
        right = next_step(reply)
        expect(
            name, answer[letter] == right,
            f"after reply {letter} (stop_reason={reply.stop_reason!r}) the loop does not {answer[letter]!r}",
            "an error or an abort ends the run whatever the reply holds; otherwise the loop runs the tool calls "
            "the reply holds, if any.",
        )  # fmt: skip
    report(name, "tool calls keep the loop going, unless the reply failed or was stopped.")
