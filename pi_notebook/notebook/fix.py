"""``%agent_fix``: after a cell fails, the agent says why and proposes a corrected cell, put below for you to read.

The failing cell is already in the history (a ``notebookCell`` message, :mod:`.cell_message`), with its source,
output and traceback; the prompt only names it and asks for the reply's shape: a sentence or two on why, then the
whole corrected cell in one fenced code block. That block becomes a new cell below (IPython's ``set_next_input``),
which is never run by itself.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from .cell_message import NotebookCellMessage

__all__ = ["corrected_cell", "failing_cell", "fix_prompt"]

_BLOCK = re.compile(r"```[ \t]*(?:python3?|py|ipython)?[ \t]*\n(.*?)\n?```", re.DOTALL | re.IGNORECASE)


def failing_cell(messages: Sequence[Any]) -> NotebookCellMessage | None:
    """The newest cell of the history that failed and may be sent (a private cell is not asked about)."""
    for message in reversed(messages):
        if isinstance(message, NotebookCellMessage) and message.error is not None:
            return None if message.exclude_from_context else message
    return None


def fix_prompt(cell: NotebookCellMessage, hint: str = "") -> str:
    """What ``%agent_fix`` asks about ``cell``."""
    which = f"cell [{cell.execution_count}]" if cell.execution_count is not None else "the last cell"
    error = cell.error
    assert error is not None
    failure = f"{error.name}: {error.value}" if error.value else error.name
    text = (
        f"The notebook {which} failed with {failure}. In one or two sentences, say why it failed. Then give the "
        "whole corrected cell, ready to run, in one ```python code block."
    )
    return f"{text}\n{hint.strip()}" if hint.strip() else text


def corrected_cell(reply: str) -> str | None:
    """The code of the last fenced code block of ``reply`` (``None``: it holds none)."""
    blocks = [block.strip("\n") for block in _BLOCK.findall(reply or "")]
    blocks = [block for block in blocks if block.strip()]
    return blocks[-1] if blocks else None
