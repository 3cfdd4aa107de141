"""Lesson 3 (``notebooks/03-extension-point.ipynb``): roles an app registers.

The ``check_*`` functions check its two exercises.
"""

from __future__ import annotations

from typing import Any, Literal

from ..agent_core import convert_to_llm, from_pi_json, message_type, register_message_type
from ..ai import PiModel, TextContent, UserMessage
from .exercise import expect, expect_indices, report, unanswered

T0 = 1748568000000
"""A fixed timestamp (Unix ms), so the lesson's outputs are the same on every run."""

# --- exercise 1: a role of your own ------------------------------------------------------------------------

REVIEW_JSON = {
    "role": "reviewNote", "file": "auth.py", "line": 2, "text": "Hash the password before comparing.",
    "timestamp": T0 + 20,
}  # fmt: skip
"""Exercise 1's message, as Pi JSON: what a session file would hold."""
REVIEW_TEXT = "Review note on auth.py:2: Hash the password before comparing."


def _text(message: Any) -> str:
    content = message.content
    return content if isinstance(content, str) else "".join(b.text for b in content if isinstance(b, TextContent))


def check_review_role(cls: Any) -> None:
    """Exercise 1: ``cls`` is a registered ``reviewNote`` role whose converter gives :data:`REVIEW_TEXT`."""
    name = "Exercise 1 (a role of your own)"
    if unanswered(name, cls):
        return
    expect(name, isinstance(cls, type) and issubclass(cls, PiModel), "the answer is the class itself, a PiModel")
    registered = message_type("reviewNote")
    expect(
        name, registered is not None and registered.model is cls,
        "the registry does not map role 'reviewNote' to your class",
        "give the class role: Literal['reviewNote'] = 'reviewNote' and call register_message_type(cls, to_llm=...).",
    )  # fmt: skip
    assert registered is not None
    message = from_pi_json(REVIEW_JSON)
    expect(name, isinstance(message, cls), f"Pi JSON of the role parses to {type(message).__name__}, not your class")
    expect(
        name, registered.to_llm is not None,
        "the role has no converter: it is UI-only, and the model never reads the note",
        "pass to_llm=your_function to register_message_type.",
    )  # fmt: skip
    sent = convert_to_llm([message])
    expect(name, len(sent) == 1 and isinstance(sent[0], UserMessage),
           f"convert_to_llm gave {[type(m).__name__ for m in sent]}, not one UserMessage",
           "an app role reaches the LLM as a user message.")  # fmt: skip
    expect(name, _text(sent[0]) == REVIEW_TEXT, f"the model reads {_text(sent[0])!r}, expected {REVIEW_TEXT!r}")
    expect(name, sent[0].timestamp == message.timestamp, "the user message must keep the note's timestamp")
    report(name, "the core parses, stores and sends a role it has never heard of.")


# --- exercise 2: which rows reach the model ---------------------------------------------------------------


class LintRunMessage(PiModel):
    """A role registered with a converter."""

    role: Literal["lintRun"] = "lintRun"
    errors: int
    timestamp: int = 0


class CursorMoveMessage(PiModel):
    """A role registered without a converter: the UI's only."""

    role: Literal["cursorMove"] = "cursorMove"
    line: int
    timestamp: int = 0


def _lint_to_llm(m: LintRunMessage) -> UserMessage:
    return UserMessage(content=f"Lint: {m.errors} errors.", timestamp=m.timestamp)


def mixed_history() -> list[Any]:
    """Exercise 2's history (registers its two roles the first time)."""
    register_message_type(LintRunMessage, to_llm=_lint_to_llm, replace=True)
    register_message_type(CursorMoveMessage, replace=True)
    return [
        UserMessage(content="Anything left to fix?", timestamp=T0 + 30),
        LintRunMessage(errors=3, timestamp=T0 + 31),
        CursorMoveMessage(line=42, timestamp=T0 + 32),
        from_pi_json({"role": "deployment", "target": "staging", "timestamp": T0 + 33}),
    ]


_WHY = {
    0: "a user message is an LLM role: sent unchanged",
    1: "lintRun is registered with a converter: sent as the user message it makes",
    2: "cursorMove is registered without a converter: UI-only, never sent",
    3: "nobody registered 'deployment': it is kept as an OpaqueMessage and never sent",
}


def check_sent_rows(answer: Any) -> None:
    """Exercise 2: ``answer`` is the set of indices of :func:`mixed_history` that reach the model."""
    name = "Exercise 2 (which rows reach the model)"
    if unanswered(name, answer):
        return
    expect_indices(name, answer)
    history = mixed_history()
    sent_times = {m.timestamp for m in convert_to_llm(history)}
    sent = {i for i, m in enumerate(history) if getattr(m, "timestamp", None) in sent_times}
    for i in sorted(set(answer) ^ sent):
        expect(name, i in _WHY, f"there is no row {i}: the history has rows 0 to {len(history) - 1}")
        said = "sent" if i in sent else "not sent"
        expect(
            name,
            False,
            f"row {i} is {said}: {_WHY[i]}.",
            "a row reaches the model only through a converter: an LLM role's own, or one an app registered.",
        )
    report(name, f"rows {sorted(sent)} reach the model; the others stay with you.")
