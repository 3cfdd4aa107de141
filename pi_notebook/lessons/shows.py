"""What an output shows, asserted: the teaching notebooks' hidden ``check`` cells (#25, item 2).

A sentence in a notebook's text that says what an output shows (a row's status, how many providers or roles) is
kept true by a code cell right after that output, tagged ``check`` and with its source hidden
(``metadata.jupyter.source_hidden``), which calls :func:`shows` with the same words::

    shows(_, dropped=[0, 1], translated=[2, 3], providers=4)

When the output changes and the text does not, the cell fails (nbval runs it) and says what the output shows
instead. ``tests/test_lesson_text.py`` fails when a text names a status or a count that no nearby check cell
names (``notebooks/README.md``, *Text that matches the outputs*).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

STATUSES = ("passed", "translated", "dropped", "summarised", "injected", "error")
"""A row's status in the inspector (:func:`~pi_notebook.coding_agent.trace.trace_boundary`)."""

__all__ = ["STATUSES", "TextMismatch", "rows_of", "shows"]


class TextMismatch(AssertionError):
    """The notebook's text says something its output does not show."""


def rows_of(output: Any) -> list[dict[str, Any]]:
    """The inspector rows of ``output``: an inspector (``pi_notebook.inspect(...)``) or its rows."""
    rows = getattr(output, "rows", output)
    if not isinstance(rows, list) or not all(isinstance(r, dict) and "status" in r for r in rows):
        raise TypeError(f"expected an inspector or its rows, got {type(output).__name__}")
    return rows


def _messages_of(output: Any) -> list[Any]:
    if hasattr(output, "rows"):
        return [r.get("agent") or {"role": r.get("role")} for r in output.rows if r.get("index") is not None]
    if hasattr(output, "messages"):  # a transcript, a session
        return list(output.messages)
    return list(output)


def _role(message: Any) -> str:
    return str(message.get("role") if isinstance(message, dict) else getattr(message, "role", "?"))


def _said(expected: Any, have: list[Any]) -> str | None:
    """What is wrong when the text says ``expected`` of a status the rows ``have`` (their indices)."""
    if expected is True:
        return None if have else "no row has it"
    if isinstance(expected, int):
        return None if len(have) == expected else f"{len(have)} rows have it, not {expected}"
    if isinstance(expected, Iterable):
        want = sorted(expected, key=str)
        return None if sorted(have, key=str) == want else f"the rows that have it are {sorted(have, key=str)}"
    raise TypeError(f"say a status with rows (a list of indices), a count or True, not {expected!r}")


def shows(output: Any, **said: Any) -> None:
    """Assert that ``output`` shows what the text says; raise :class:`TextMismatch` naming each difference.

    ``output``: an inspector (in a check cell right after it, ``_``), a transcript, a session or a list of
    messages. What the text can say:

    - a status (:data:`STATUSES`) as ``dropped=[0, 1]`` (exactly these rows, by the inspector's ``#``; ``None``
      for a row ``transform_context`` added), ``dropped=2`` (that many rows) or ``dropped=True`` (some row);
    - ``providers=N``: the request panel offers N request bodies (providers / APIs);
    - ``messages=N``: N stored messages (an inspector's rows with a ``#``, a transcript's messages);
    - ``sent=N``: N of them reach the LLM (passed, translated or injected);
    - ``roles=N`` (N different roles) or ``roles={"user": 2, ...}`` / ``roles={"user", ...}`` (exactly these).
    """
    wrong: list[str] = []
    statuses = {key: said.pop(key) for key in STATUSES if key in said}
    if statuses or "sent" in said or "providers" in said:
        rows = rows_of(output)
        for status, expected in statuses.items():
            problem = _said(expected, [r["index"] for r in rows if r["status"] == status])
            if problem:
                wrong.append(f"the text says {expected!r} {status}: {problem}")
        if "sent" in said:
            sent = sum(1 for r in rows if r["status"] in ("passed", "translated", "injected"))
            if sent != said.pop("sent"):
                wrong.append(f"{sent} rows are sent")
        if "providers" in said:
            bodies = sorted(getattr(output, "requests", {}) or {})
            if len(bodies) != said.pop("providers"):
                wrong.append(f"the request panel offers {len(bodies)} request bodies: {bodies}")
    if "messages" in said or "roles" in said:
        messages = _messages_of(output)
        if "messages" in said and len(messages) != said.pop("messages"):
            wrong.append(f"{len(messages)} messages are shown")
        if "roles" in said:
            roles, expected = Counter(_role(m) for m in messages), said.pop("roles")
            have: Any = len(roles) if isinstance(expected, int) else dict(roles)
            if isinstance(expected, (set, frozenset)):
                have = set(roles)
            if have != (dict(expected) if isinstance(expected, dict) else expected):
                wrong.append(f"the roles shown are {dict(roles)}")
    if said:
        raise TypeError(f"shows() does not know {sorted(said)}")
    if wrong:
        raise TextMismatch("the text and the output disagree: " + "; ".join(wrong) + f".\nRows: {_rows_line(output)}")


def _rows_line(output: Any) -> str:
    try:
        return ", ".join(f"{r['index']}:{r['role']} {r['status']}" for r in rows_of(output))
    except TypeError:
        return f"{len(_messages_of(output))} messages"
