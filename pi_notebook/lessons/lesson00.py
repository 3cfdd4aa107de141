"""The quickstart (``notebooks/00-quickstart.ipynb``): the ``check_*`` functions check its two exercises."""

from __future__ import annotations

from typing import Any

from .exercise import expect, report, unanswered
from .shows import rows_of

# --- exercise 1: which magic ------------------------------------------------------------------------------

SITUATIONS = {
    "the model should read why the tests fail": "%bash",
    "you want to look at a file with a password in it": "%bash!",
    "you want the model to fix a function": "%%agent",
}
"""Exercise 1: each situation, and the magic for it."""

_WHY = {
    "%bash": "%bash runs the command and records it, so the model reads its output at its next turn",
    "%bash!": "%bash! shows and stores the command but never sends it to the model",
    "%%agent": "%%agent sends the cell to the model as a prompt, with the history",
}


def check_magics(answer: Any) -> None:
    """Exercise 1: ``answer`` maps each of :data:`SITUATIONS` to ``"%bash"``, ``"%bash!"`` or ``"%%agent"``."""
    name = "Exercise 1 (which magic)"
    if unanswered(name, answer):
        return
    expect(name, isinstance(answer, dict), 'answer with a dict: {"the model should read ...": "%bash", ...}')
    missing = [s for s in SITUATIONS if s not in answer]
    expect(name, not missing, f"the answer has no magic for {missing[0]!r}" if missing else "",
           "copy the three keys of SITUATIONS.")  # fmt: skip
    for situation, right in SITUATIONS.items():
        given = answer[situation]
        expect(
            name, given == right, f"for {situation!r}, {given!r} is not it",
            f"{_WHY.get(right, '')}; " + (f"whereas {_WHY[given]}." if given in _WHY else "the three are %bash, "
                                          "%bash! and %%agent."),
        )  # fmt: skip
    report(name, "the model reads %bash, never %bash!, and answers %%agent.")


# --- exercise 2: how many rows are sent --------------------------------------------------------------------

SENT = ("passed", "translated", "injected")


def check_sent_count(answer: Any, inspector: Any) -> None:
    """Exercise 2: ``answer`` is how many of ``inspector``'s rows, your cells (``notebookCell``) left out, the next
    request sends."""
    name = "Exercise 2 (how many rows are sent)"
    if unanswered(name, answer):
        return
    expect(name, isinstance(answer, int), "answer with a number")
    rows = [r for r in rows_of(inspector) if r["role"] != "notebookCell"]
    sent = [r for r in rows if r["status"] in SENT]
    counted = {status: sum(1 for r in rows if r["status"] == status) for status in sorted({r["status"] for r in rows})}
    expect(
        name, answer == len(sent), f"{answer} is not it: leaving out your cells, the statuses are {counted}",
        "a row is sent when its status is passed, translated or injected; dropped and summarised rows are not.",
    )  # fmt: skip
    report(name, f"{len(sent)} of those {len(rows)} rows reach the model; the rest stay with you.")
