"""The notebook app's own role: ``notebookCell``, a code cell the user ran, as the agent sees it.

Pi's coding agent adds ``bashExecution`` for the commands a user runs (``!cmd``); the notebook adds this role for
the cells a user runs, through the same public :func:`~pi_notebook.agent_core.register_message_type`. The message
keeps the cell as it happened: its source, its execution count, what it printed and returned (ANSI stripped,
secrets masked, only the tail when it was long, the whole of it in a file), the pictures it drew (PNG and JPEG
kept as images) and its error. What the LLM reads of it is one user message: the cell, its output, its images
(a model that cannot see images gets Pi's placeholder text instead, see
:func:`~pi_notebook.coding_agent.context_pipeline.convert_for`) and its traceback. A cell marked private
(``%agent_private``) is shown and stored, never sent, like ``%bash!``.

Pi does not know this role: a session file opened in Pi keeps these entries and leaves them out of Pi's context
(its ``convertToLlm`` skips a role it does not know).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ..agent_core import register_message_type
from ..ai import ImageContent, Number, PiModel, TextContent, UserMessage, now_ms
from ..coding_agent import messages as _coding_roles  # noqa: F401 - the app below registers its roles first

__all__ = ["CellError", "NotebookCellMessage", "notebook_cell_to_text"]


class CellError(PiModel):
    """The error a cell raised."""

    name: str
    """The exception's class name, e.g. ``KeyError``."""
    value: str = ""
    """Its message, e.g. ``'a'``."""
    traceback: str = ""
    """The traceback as the user saw it, without colours; only its end when it was long."""


class NotebookCellMessage(PiModel):
    """A code cell the user ran in the notebook (recorded when it finished)."""

    role: Literal["notebookCell"] = "notebookCell"
    """Message tag, always ``"notebookCell"``."""
    source: str
    """The cell's code as it ran (only its start and end when it was very long)."""
    execution_count: int | None = None
    """The ``[n]`` Jupyter shows beside the cell."""
    output: str = ""
    """What it printed, displayed as text and returned, in order: sanitised, the tail when it was long."""
    images: list[ImageContent] = Field(default_factory=list)
    """The pictures it displayed (PNG, JPEG): a matplotlib figure, ``display(Image(...))``."""
    error: CellError | None = None
    """The error it raised, if any."""
    cancelled: bool = False
    """The stop button interrupted it."""
    truncated: bool = False
    """``output`` holds only the tail of what the cell printed."""
    full_output_path: str | None = None
    """A file holding all of the output, when it was cut."""
    omitted: list[str] = Field(default_factory=list)
    """What was left out, one line each (an image too large, more images than a cell keeps)."""
    timestamp: Number = Field(default_factory=now_ms)
    """Unix milliseconds."""
    exclude_from_context: bool | None = None
    """True for a cell marked ``%agent_private``: shown and stored, never sent to the LLM."""


def _fence(text: str, lang: str = "") -> str:
    """``text`` in a code fence longer than any run of backticks inside it."""
    ticks = "`" * max(3, _longest_backticks(text) + 1)
    return f"{ticks}{lang}\n{text}\n{ticks}"


def _longest_backticks(text: str) -> int:
    best = run = 0
    for char in text:
        run = run + 1 if char == "`" else 0
        best = max(best, run)
    return best


def notebook_cell_to_text(message: NotebookCellMessage) -> str:
    """The text the LLM reads for a cell the user ran (its images follow it as image blocks)."""
    count = f" [{message.execution_count}]" if message.execution_count is not None else ""
    text = f"Ran notebook cell{count}:\n{_fence(message.source, 'python')}"
    if message.output:
        text += f"\nOutput:\n{_fence(message.output)}"
    elif message.error is None and not message.images:
        text += "\n(no output)"
    if message.truncated:
        where = f" Full output: {message.full_output_path}" if message.full_output_path else ""
        text += f"\n\n[Output truncated.{where}]"
    if message.images:
        n = len(message.images)
        text += f"\n\nIt displayed {n} image{'s' if n != 1 else ''} (attached after this text)."
    for line in message.omitted:
        text += f"\n\n[{line}]"
    if message.cancelled:
        text += "\n\n(cell interrupted)"
    if message.error is not None:
        error = message.error
        head = f"{error.name}: {error.value}" if error.value else error.name
        text += f"\n\nThe cell failed with {head}"
        if error.traceback:
            text += f"\n{_fence(error.traceback)}"
    return text


def _to_llm(message: NotebookCellMessage) -> UserMessage | None:
    if message.exclude_from_context:
        return None
    content: list[TextContent | ImageContent] = [TextContent(text=notebook_cell_to_text(message)), *message.images]
    return UserMessage(content=content, timestamp=message.timestamp)


register_message_type(NotebookCellMessage, to_llm=_to_llm)
