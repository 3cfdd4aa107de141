"""Lesson 4 (``notebooks/04-the-boundary.ipynb``): what ``convert_to_llm`` makes of each role.

:func:`before_after` is the lesson's display helper; the ``check_*`` functions check its three exercises.
"""

from __future__ import annotations

import json
from typing import Any

from ..agent_core import convert_to_llm
from ..ai import AssistantMessage, TextContent, UserMessage
from ..coding_agent import BashExecutionMessage, BranchSummaryMessage, CustomMessage
from .exercise import expect, expect_indices, report, unanswered

T0 = 1748568000000
"""A fixed timestamp (Unix ms), so the lesson's outputs are the same on every run."""


def before_after(message: Any) -> None:
    """Print ``message`` as stored (Pi JSON), then what the LLM gets of it."""
    print("BEFORE — the AgentMessage, as stored")
    print(json.dumps(message.to_pi_json(), indent=2, ensure_ascii=False))
    print("\nAFTER — what the LLM gets")
    out = convert_to_llm([message])
    if not out:
        print("(nothing: the message is dropped)")
    for m in out:
        print(f"a {m.role} message with one text block:\n")
        print(m.content[0].text)


def first_difference(got: str, right: str) -> str:
    """Where two texts part, said as a learner can use it: the line number and both versions."""
    got_lines, right_lines = got.split("\n"), right.split("\n")
    for number, (g, r) in enumerate(zip(got_lines, right_lines, strict=False), start=1):
        if g != r:
            return f"line {number} is {g!r}; the LLM gets {r!r}"
    if len(got_lines) < len(right_lines):
        missing = right_lines[len(got_lines) :]
        return f"your text stops after line {len(got_lines)}; the LLM's goes on with {missing!r}"
    return f"your text has {len(got_lines) - len(right_lines)} line(s) too many: {got_lines[len(right_lines) :]!r}"


# --- exercise 1: predict the text ------------------------------------------------------------------------

FAILED_LINT = BashExecutionMessage(command="make lint", output="", exit_code=2, timestamp=T0)
"""Exercise 1's message: a command that printed nothing and failed."""


def check_bash_text(answer: Any) -> None:
    """Exercise 1: ``answer`` is the exact text the LLM gets for :data:`FAILED_LINT`."""
    name = "Exercise 1 (predict the text)"
    if unanswered(name, answer):
        return
    expect(name, isinstance(answer, str), f"the answer is a {type(answer).__name__}; write the text as one string")
    right = convert_to_llm([FAILED_LINT])[0].content[0].text
    hint = (
        "three rules apply, in order: the Ran line; the output in a fence, or (no output) when there is none; a "
        "non-zero exit code after a blank line. Compare with the empty `touch` and the failed `make test` above."
    )
    expect(name, answer == right, first_difference(answer, right), hint)
    report(name, "that is the text, to the character.")


# --- exercise 2: which rows are dropped -----------------------------------------------------------------

DROP_HISTORY: list[Any] = [
    UserMessage(content="Deploy the branch to staging.", timestamp=T0),
    BashExecutionMessage(
        command="cat .env", output="TOKEN=…", exit_code=0, exclude_from_context=True, timestamp=T0 + 1
    ),
    CustomMessage(custom_type="house-rules", content="Never print secrets.", display=False, timestamp=T0 + 2),
    BashExecutionMessage(command="sleep 60", output="", exit_code=None, cancelled=True, timestamp=T0 + 3),
    {"role": "deployEvent", "target": "staging", "status": "started", "timestamp": T0 + 4},
    BranchSummaryMessage(summary="Tried a blue-green deploy; rolled back.", from_id="root", timestamp=T0 + 5),
    AssistantMessage(
        content=[TextContent(text="The deploy started.")], api="faux", provider="faux", model="faux-1",
        stop_reason="stop", timestamp=T0 + 6,
    ),
]  # fmt: skip
"""Exercise 2's history: index 4 is Pi JSON of a role nobody registered."""

_WHY = {
    0: "a user message is an LLM role: it passes unchanged",
    1: "excludeFromContext (a %bash! command) is the one bashExecution that is dropped",
    2: "display=False only hides the note in the UI; convert_to_llm still sends it",
    3: "a cancelled command is still sent, ending with (command cancelled)",
    4: "no converter is registered for role 'deployEvent', so nothing is sent for it",
    5: "a branch summary is sent, wrapped in its preamble and <summary> tags",
    6: "an assistant message is an LLM role: it passes unchanged",
}


def check_dropped(answer: Any) -> None:
    """Exercise 2: ``answer`` is the set of indices of :data:`DROP_HISTORY` that ``convert_to_llm`` drops."""
    name = "Exercise 2 (which rows are dropped)"
    if unanswered(name, answer):
        return
    expect_indices(name, answer)
    sent_times = {m.timestamp for m in convert_to_llm(DROP_HISTORY)}
    dropped = {i for i, m in enumerate(DROP_HISTORY) if _timestamp(m) not in sent_times}
    chosen = set(answer)
    for i in sorted(chosen):
        expect(
            name,
            i in range(len(DROP_HISTORY)),
            f"there is no row {i}: the history has rows 0 to {len(DROP_HISTORY) - 1}",
        )
    for i in sorted(chosen ^ dropped):
        said = "dropped" if i in dropped else "sent"
        expect(
            name, False, f"row {i} is {said}: {_WHY[i]}.",
            "a message is dropped only when its converter returns nothing: an excluded command, or a role with no "
            "converter.",
        )  # fmt: skip
    report(name, f"rows {sorted(dropped)} are dropped; the other {len(DROP_HISTORY) - len(dropped)} are sent.")


def _timestamp(message: Any) -> int:
    return message["timestamp"] if isinstance(message, dict) else message.timestamp


# --- exercise 3: write a converter -----------------------------------------------------------------------

_CASES = [
    BashExecutionMessage(command="pytest -q", output="1 failed, 11 passed", exit_code=1, timestamp=T0 + 10),
    BashExecutionMessage(command="ls", output="a.txt", exit_code=0, timestamp=T0 + 11),
    BashExecutionMessage(command="sleep 60", output="", exit_code=None, cancelled=True, timestamp=T0 + 12),
]


def check_converter(converter: Any) -> None:
    """Exercise 3: ``converter(message)`` is a bashExecution converter as the exercise describes it."""
    name = "Exercise 3 (write a converter)"
    if unanswered(name, converter):
        return
    expect(name, callable(converter), f"the answer is a {type(converter).__name__}; give the function itself")
    secret = BashExecutionMessage(command="cat .env", output="TOKEN=x", exit_code=0, exclude_from_context=True)
    expect(
        name, converter(secret) is None,
        "a %bash! command (exclude_from_context=True) must give None, or the secret reaches the model",
        "test message.exclude_from_context first and return None.",
    )  # fmt: skip
    for case in _CASES:
        out = converter(case)
        expect(
            name, isinstance(out, UserMessage),
            f"for `{case.command}` it returned {type(out).__name__}, not a UserMessage",
            "every app role reaches the LLM as a user message: return UserMessage(content=..., timestamp=...).",
        )  # fmt: skip
        text = out.content if isinstance(out.content, str) else "".join(getattr(b, "text", "") for b in out.content)
        first, *rest = text.split("\n")
        status = "cancelled" if case.cancelled else f"exit {case.exit_code}"
        expect(
            name,
            first == f"$ {case.command} ({status})",
            f"for `{case.command}` the first line is {first!r}, expected {f'$ {case.command} ({status})'!r}",
            "a cancelled command has no exit code: say cancelled.",
        )
        expect(
            name,
            "\n".join(rest) == case.output,
            f"for `{case.command}` the lines after the first are "
            f"{chr(10).join(rest)!r}, expected the output {case.output!r} (nothing when it is empty)",
        )
        expect(
            name,
            out.timestamp == case.timestamp,
            "the user message must keep the command's timestamp",
            "pass timestamp=message.timestamp.",
        )
    report(name, "the converter keeps %bash! out and says each command in two parts.")
