"""Lesson 2 (``notebooks/02-two-readers.ipynb``): one shell command, two readers (the UI and the LLM).

The ``check_*`` functions check its two exercises.
"""

from __future__ import annotations

from typing import Any

from ..agent_core import convert_to_llm
from ..ai import AssistantMessage, TextContent, UserMessage
from ..coding_agent import BashExecutionMessage, bash_execution_to_text
from .exercise import expect, report, unanswered

T0 = 1748568000000
"""A fixed timestamp (Unix ms), so the lesson's outputs are the same on every run."""

# --- exercise 1: read the exit code back from the text ----------------------------------------------------

RUNS = [
    BashExecutionMessage(command="pytest -q", output="1 failed, 11 passed", exit_code=1, timestamp=T0),
    BashExecutionMessage(command="ls demo", output="private.txt\ntodo.txt", exit_code=0, timestamp=T0 + 1),
    BashExecutionMessage(command="nosuchtool", output="bash: nosuchtool: command not found", exit_code=127,
                         timestamp=T0 + 2),
    BashExecutionMessage(command="sleep 60", output="", exit_code=None, cancelled=True, timestamp=T0 + 3),
]  # fmt: skip
"""Exercise 1's commands: the learner's function sees only the text the LLM reads of each."""


def check_exit_code_reader(reader: Any) -> None:
    """Exercise 1: ``reader(text)`` gives the exit code of the command whose LLM text is ``text`` (``None`` for a
    cancelled command), for each of :data:`RUNS`."""
    name = "Exercise 1 (read the exit code back)"
    if unanswered(name, reader):
        return
    expect(name, callable(reader), f"the answer is a {type(reader).__name__}; give the function itself")
    for run in RUNS:
        text = bash_execution_to_text(run)
        got = reader(text)
        expect(
            name, got == run.exit_code,
            f"for `{run.command}` it returned {got!r}; the command's exit_code field is {run.exit_code!r}. "
            f"The text was:\n{text}",
            "print bash_execution_to_text(m) for each of RUNS: which line says the code, and what does the text say "
            "when the command succeeded, or was cancelled?",
        )  # fmt: skip
    report(
        name,
        "it works, because you know the converter's rules (no line for 0). The UI reads exit_code and needs none.",
    )


# --- exercise 2: what the model is sent ----------------------------------------------------------------------

HISTORY: list[Any] = [
    UserMessage(content="Is the build green?", timestamp=T0 + 10),
    BashExecutionMessage(command="make test", output="ok", exit_code=0, timestamp=T0 + 11),
    BashExecutionMessage(command="cat .env", output="TOKEN=…", exit_code=0, exclude_from_context=True,
                         timestamp=T0 + 12),
    AssistantMessage(content=[TextContent(text="Yes: make test passed.")], api="faux", provider="faux",
                     model="faux-1", stop_reason="stop", timestamp=T0 + 13),
]  # fmt: skip
"""Exercise 2's history: a question, a %bash command, a %bash! command, a reply."""


def check_sent_roles(answer: Any) -> None:
    """Exercise 2: ``answer`` is the list of roles ``convert_to_llm(HISTORY)`` returns, in order."""
    name = "Exercise 2 (what the model is sent)"
    if unanswered(name, answer):
        return
    expect(name, isinstance(answer, list) and all(isinstance(r, str) for r in answer),
           'answer with a list of role names, such as ["user", "assistant"]')  # fmt: skip
    right = [m.role for m in convert_to_llm(HISTORY)]
    expect(
        name, "bashExecution" not in answer,
        "the LLM never gets a bashExecution: it only knows user, assistant and toolResult",
        "a shell command the model may read reaches it as a user message.",
    )  # fmt: skip
    expect(
        name, len(answer) == len(right),
        f"you listed {len(answer)} messages; the model gets {len(right)}",
        "a %bash! command (exclude_from_context=True) is kept for you and sent as nothing.",
    )  # fmt: skip
    expect(name, answer == right, f"the order is {right}: each message keeps its place")
    report(name, f"{right}: the command became a user message, the %bash! one was left out.")
