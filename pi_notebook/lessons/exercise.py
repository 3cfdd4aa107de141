"""The small vocabulary every exercise checker uses (see the package docstring)."""

from __future__ import annotations

from typing import Any

NOT_ANSWERED = "not answered yet: replace the ... with your answer, then run the cell again."


class WrongAnswer(AssertionError):
    """A learner's answer is wrong: the message says what is wrong and how to get there (the hint)."""

    def __init__(self, exercise: str, wrong: str, hint: str = "") -> None:
        self.exercise, self.wrong, self.hint = exercise, wrong, hint
        super().__init__(f"{exercise}: {wrong}" + (f"\nHint: {hint}" if hint else ""))


def unanswered(exercise: str, *answers: Any) -> bool:
    """Whether any of ``answers`` is still ``...`` (then say so, and the checker returns without judging)."""
    if any(a is Ellipsis for a in answers):
        print(f"{exercise}: {NOT_ANSWERED}")
        return True
    return False


def expect(exercise: str, condition: bool, wrong: str, hint: str = "") -> None:
    """Raise :class:`WrongAnswer` (``wrong``, then ``hint``) unless ``condition`` holds."""
    if not condition:
        raise WrongAnswer(exercise, wrong, hint)


def expect_indices(exercise: str, answer: Any) -> None:
    """Raise :class:`WrongAnswer` unless ``answer`` is a set (or list) of row indices, such as ``{0, 3}``."""
    expect(
        exercise, isinstance(answer, (set, list, tuple)) and all(isinstance(i, int) for i in answer),
        "answer with a set of indices, such as {0, 3}",
    )  # fmt: skip


def report(exercise: str, message: str = "right.") -> None:
    """Say that an exercise is done."""
    print(f"✓ {exercise}: {message}")
