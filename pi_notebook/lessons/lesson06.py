"""Lesson 6 (``notebooks/06-visibility.ipynb``): who sees a message, the transcript and/or the LLM.

The ``check_*`` functions check the lesson's three exercises.
"""

from __future__ import annotations

from typing import Any

from ..agent_core import convert_to_llm, visibility
from ..ai import UserMessage
from ..coding_agent import BashExecutionMessage, BranchSummaryMessage, CustomMessage
from .exercise import expect, report, unanswered

T0 = 1748568000000

LEVEL_MESSAGES: list[Any] = [
    BashExecutionMessage(command="ls demo", output="todo.txt", exit_code=0, timestamp=T0),
    BashExecutionMessage(command="cat demo/private.txt", output="…", exit_code=0, exclude_from_context=True,
                         timestamp=T0 + 1),
    CustomMessage(custom_type="house-rules", content="Never quote secrets.", display=False, timestamp=T0 + 2),
    CustomMessage(custom_type="git-status", content="2 files changed.", display=True, timestamp=T0 + 3),
    BranchSummaryMessage(summary="Tried a cache; slower.", from_id="root", timestamp=T0 + 4),
    {"role": "deployEvent", "target": "staging", "timestamp": T0 + 5},
]  # fmt: skip
"""Exercise 1's messages; the last is Pi JSON of a role no app registered."""

_WHY = {
    "both": "shown in the transcript, and its converter sends it",
    "ui": "shown in the transcript, but its converter returns nothing",
    "llm": "display=False keeps it out of the transcript, and its converter still sends it",
}
_LEVELS = ("both", "ui", "llm")


def check_levels(answer: Any) -> None:
    """Exercise 1: ``answer`` lists the visibility level of each of :data:`LEVEL_MESSAGES`."""
    name = "Exercise 1 (who sees what)"
    if unanswered(name, answer, *(answer if isinstance(answer, (list, tuple)) else ())):
        return
    expect(name, isinstance(answer, (list, tuple)), "answer with a list of levels, one per message")
    expect(
        name, len(answer) == len(LEVEL_MESSAGES),
        f"the list has {len(answer)} levels; there are {len(LEVEL_MESSAGES)} messages",
    )  # fmt: skip
    for i, (given, message) in enumerate(zip(answer, LEVEL_MESSAGES, strict=True)):
        expect(name, given in _LEVELS, f"message {i}: {given!r} is not one of {_LEVELS}")
        level = visibility(message).level
        expect(
            name, given == level, f"message {i} is {level!r}, not {given!r}: {_WHY[level]}.",
            "ask two questions of each: does the transcript show it (display is not False)? does its converter "
            "return anything (not a %bash! command, and a role with a converter)?",
        )  # fmt: skip
    report(name, "two readers, asked separately for each message.")


def check_llm_only(note: Any) -> None:
    """Exercise 2: ``note`` is a ``custom`` message the LLM reads and the transcript does not show."""
    name = "Exercise 2 (a note for the model only)"
    if unanswered(name, note):
        return
    expect(
        name, isinstance(note, CustomMessage), f"the answer is a {type(note).__name__}, not a CustomMessage",
        "CustomMessage(custom_type=..., content=..., display=...)",
    )  # fmt: skip
    level = visibility(note).level
    expect(name, level == "llm", f"its level is {level!r}, not 'llm'", "display=False hides it from the transcript.")
    sent = convert_to_llm([note])
    text = sent[0].content[0].text if sent and not isinstance(sent[0].content, str) else ""
    expect(name, "French" in text, f"the model reads {text!r}; it should be told to answer in French")
    report(name, f"hidden in the transcript, sent as: {text!r}.")


SECRET_HISTORY: list[Any] = [
    UserMessage(content="What is in demo?", timestamp=T0),
    BashExecutionMessage(command="ls demo", output="private.txt\ntodo.txt", exit_code=0, timestamp=T0 + 1),
    BashExecutionMessage(command="cat demo/private.txt", output="DEMO_API_TOKEN=pretend", exit_code=0,
                         timestamp=T0 + 2),
    BashExecutionMessage(command="cat demo/todo.txt", output="Buy milk.", exit_code=0, timestamp=T0 + 3),
    CustomMessage(custom_type="note", content="Rotate any TOKEN= you see.", display=True, timestamp=T0 + 4),
]  # fmt: skip
"""Exercise 3's history: a secret was shown with %bash where %bash! was meant (index 2)."""


def check_no_secrets(transform: Any) -> None:
    """Exercise 3: ``transform`` leaves out every shell command whose output holds ``TOKEN=``."""
    name = "Exercise 3 (keep a secret out, after the fact)"
    if unanswered(name, transform):
        return
    expect(name, callable(transform), f"the answer is a {type(transform).__name__}; give the function itself")
    history = list(SECRET_HISTORY)
    out = transform(history)
    expect(name, isinstance(out, list), f"it returned {type(out).__name__}; a transform_context returns a list")
    expect(name, history == SECRET_HISTORY, "it changed the list it was given: the stored history must stay whole",
           "build a new list with a comprehension.")  # fmt: skip
    indices = [next((i for i, h in enumerate(history) if h is m), None) for m in out]
    expect(name, 2 not in indices, "the secret's command is still sent", "test 'TOKEN=' in message.output.")
    expect(
        name, indices == [0, 1, 3, 4],
        f"it kept the rows {indices}; only row 2 should go (row 4 is a note about tokens, not a shell command)",
        "leave out a message only when it is a bashExecution and its output holds TOKEN=.",
    )  # fmt: skip
    report(name, "the LLM no longer gets the secret; the session and the transcript still hold it.")
