"""Lesson 5 (``notebooks/05-two-stage-pipeline.ipynb``): ``transform_context``, then ``convert_to_llm``.

:func:`said` and :func:`sent` are the lesson's helpers; the ``check_*`` functions check its three exercises.
"""

from __future__ import annotations

from typing import Any

from ..agent_core import prepare_llm_messages
from ..ai import AssistantMessage, TextContent, UserMessage
from ..coding_agent import BashExecutionMessage
from .exercise import expect, report, unanswered

T0 = 1748568000000
"""A fixed timestamp (Unix ms), so the lesson's outputs are the same on every run."""


def said(text: str, t: int) -> AssistantMessage:
    """An assistant reply of the faux model, at time ``t``."""
    return AssistantMessage(
        content=[TextContent(text=text)], api="faux", provider="faux", model="faux-1", stop_reason="stop", timestamp=t
    )


def sent(messages: list[Any]) -> None:
    """One line per Message: its role and the start of its text."""
    for m in messages:
        text = m.content if isinstance(m.content, str) else " ".join(b.text for b in m.content if b.type == "text")
        print(f"{m.role:<9} {text.splitlines()[0][:72]}")


def lesson_history() -> list[Any]:
    """The lesson's history: two exchanges, each with a shell command, then a question."""
    return [
        UserMessage(content="Set up the project.", timestamp=T0),
        said("Created pyproject.toml and src/app.py.", T0 + 1),
        BashExecutionMessage(command="pytest -q", output="3 passed", exit_code=0, timestamp=T0 + 2),
        UserMessage(content="Now add a login page.", timestamp=T0 + 3),
        said("Added templates/login.html and a route.", T0 + 4),
        BashExecutionMessage(command="pytest -q", output="1 failed, 3 passed", exit_code=1, timestamp=T0 + 5),
        UserMessage(content="Why does the new test fail?", timestamp=T0 + 6),
    ]


# --- exercise 1: which rows does a pruning keep ------------------------------------------------------------


def check_kept(answer: Any, strategy: Any) -> None:
    """Exercise 1: ``answer`` lists the indices of :func:`lesson_history` that ``strategy`` keeps."""
    name = "Exercise 1 (which rows are kept)"
    if unanswered(name, answer):
        return
    expect(
        name, isinstance(answer, (list, tuple)) and all(isinstance(i, int) for i in answer),
        "answer with a list of indices, such as [0, 1]",
    )  # fmt: skip
    history = lesson_history()
    kept_ids = {id(m) for m in strategy(history)}
    kept = [i for i, m in enumerate(history) if id(m) in kept_ids]
    hint = (
        "an exchange starts at each user message and at each shell command (index 0, 2, 3, 5 and 6); keeping two "
        "keeps everything from the second-to-last start on."
    )
    missing, extra = sorted(set(kept) - set(answer)), sorted(set(answer) - set(kept))
    expect(name, not missing, f"row(s) {missing} are kept too", hint)
    expect(name, not extra, f"row(s) {extra} are dropped: they come before the last two exchanges", hint)
    report(name, f"rows {kept} are kept.")


# --- exercise 2: make a transform --------------------------------------------------------------------------


def check_transform(transform: Any) -> None:
    """Exercise 2: ``transform`` keeps every message but the shell commands before the newest one."""
    name = "Exercise 2 (make a transform)"
    if unanswered(name, transform):
        return
    expect(name, callable(transform), f"the answer is a {type(transform).__name__}; give the function itself")
    history = lesson_history()
    before = list(history)
    out = transform(history)
    expect(
        name, isinstance(out, list), f"it returned {type(out).__name__}; a transform_context returns a list",
        "build a new list and return it.",
    )  # fmt: skip
    expect(name, history == before, "it changed the list it was given; stage 1 returns a new list and leaves the "
           "stored history alone", "use a list comprehension instead of .remove() or del.")  # fmt: skip
    expect(
        name, all(not isinstance(m, UserMessage) or any(m is h for h in history) for m in out),
        "it returned new user messages: stage 1 works on AgentMessages and leaves the translation to stage 2",
        "return the messages themselves; do not convert them.",
    )  # fmt: skip
    right = [m for i, m in enumerate(history) if i != 2]
    roles = [m.role for m in out]
    expect(
        name, [id(m) for m in out] == [id(m) for m in right],
        f"it returned the roles {roles}; expected {[m.role for m in right]} (only the older pytest left out)",
        "find the index of the last bashExecution, then keep a message unless it is a bashExecution at another index.",
    )  # fmt: skip
    sent_roles = [m.role for m in prepare_llm_messages(history, transform)]
    report(name, f"{len(out)} AgentMessages kept; the LLM gets {sent_roles}.")


# --- exercise 3: which stage changes -----------------------------------------------------------------------

CHANGES = (
    "summarise everything older than an hour",
    "show an orderNote to the model as JSON",
    "move from Claude to Gemini",
)
"""Exercise 3's changes, in the order of the answer's keys."""

_STAGE = {
    CHANGES[0]: ("transform_context", "choosing which messages are sent, or summarising them, is context management"),
    CHANGES[1]: ("convert_to_llm", "how one role is said to the model is the converter's job"),
    CHANGES[2]: ("neither", "both stages end with plain Messages; each provider turns those into its own JSON"),
}


def check_stage(answer: Any) -> None:
    """Exercise 3: ``answer`` maps each of :data:`CHANGES` to the stage that changes."""
    name = "Exercise 3 (which stage changes)"
    if unanswered(name, answer, *(answer.values() if isinstance(answer, dict) else ())):
        return
    expect(name, isinstance(answer, dict), "answer with a dict: {change: stage}")
    expect(name, set(answer) == set(CHANGES), f"the keys must be the three changes: {list(CHANGES)}")
    for change, (stage, why) in _STAGE.items():
        given = answer[change]
        expect(
            name, given in ("transform_context", "convert_to_llm", "neither"),
            f"{given!r} is not one of 'transform_context', 'convert_to_llm', 'neither'",
        )  # fmt: skip
        expect(name, given == stage, f"{change!r}: not {given}, {stage}: {why}.")
    report(name, "one change per stage, and one that needs neither.")
