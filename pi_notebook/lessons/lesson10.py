"""Lesson 10 (``notebooks/10-the-notebook-role.ipynb``): the notebook app's own role, ``notebookCell``.

The ``check_*`` functions check the lesson's two exercises.
"""

from __future__ import annotations

import base64
import struct
import zlib
from typing import Any

from ..ai import ImageContent, get_model
from ..coding_agent.context_pipeline import convert_for
from ..notebook.cell_message import NotebookCellMessage
from ..notebook.cell_recorder import is_own_cell
from .exercise import expect, report, unanswered

_PIXEL = base64.b64encode(
    bytes.fromhex(
        "89504e470d0a1a0a0000000d4948445200000001000000010802000000907753de0000000c4944415408d763f8cfc0"
        "00000301010018dd8db00000000049454e44ae426082"
    )
).decode()
"""A one-pixel PNG, base64: the figures of exercise 1."""

TWO_FIGURES = NotebookCellMessage(
    source="show(a)\nshow(b)",
    execution_count=9,
    images=[ImageContent(data=_PIXEL, mime_type="image/png"), ImageContent(data=_PIXEL, mime_type="image/png")],
)
"""Exercise 1's cell: it displayed two figures."""


def check_blocks(answer: Any) -> None:
    """Exercise 1: ``answer`` lists the block types of the user message the ``local`` model gets for
    :data:`TWO_FIGURES`."""
    name = "Exercise 1 (two pictures, one note)"
    if unanswered(name, answer):
        return
    expect(name, isinstance(answer, (list, tuple)), 'answer with a list of block types, such as ["text", "image"]')
    got = [block.type for block in convert_for(get_model("local"))([TWO_FIGURES])[0].content]
    expect(
        name, "image" not in answer, "the local model reads text only: no image block reaches it",
        "convert_for(model) replaces each image with Pi's placeholder text for a model that cannot see.",
    )  # fmt: skip
    expect(
        name, list(answer) == got, f"the message has {len(got)} blocks, {got}, not {len(answer)}",
        "images next to each other become one placeholder, said once, after the cell's text.",
    )  # fmt: skip
    report(name, f"{got}: the cell's text, then one placeholder for both figures.")


CANDIDATES = (
    "df = load('sales.csv')",
    "%bash ls demo",
    "%agent_private\nkey_rate = 0.2",
    "pi_notebook.inspect(pi_notebook.current_session())",
    "# a comment first\nprint('hi')",
)
"""Exercise 2's cells, by their source."""

_WHY = {
    0: "your own work: it joins the history",
    1: "%bash records its own bashExecution message, not a notebookCell",
    2: "%agent_private cells are recorded (and shown), only never sent",
    3: "a line that calls pi_notebook. is about the agent, not your work",
    4: "comments are skipped: the first real line is your own code",
}


def check_recorded(answer: Any) -> None:
    """Exercise 2: ``answer`` says, for each of :data:`CANDIDATES`, whether it is recorded as a ``notebookCell``."""
    name = "Exercise 2 (which cells join the history)"
    if unanswered(name, answer, *(answer if isinstance(answer, (list, tuple)) else ())):
        return
    expect(name, isinstance(answer, (list, tuple)) and len(answer) == len(CANDIDATES),
           f"answer with a list of {len(CANDIDATES)} True/False, one per cell")  # fmt: skip
    for i, (given, source) in enumerate(zip(answer, CANDIDATES, strict=True)):
        recorded = not is_own_cell(source)
        expect(name, isinstance(given, bool), f"cell {i}: {given!r} is not True or False")
        expect(
            name, given == recorded, f"cell {i} ({source.splitlines()[0]!r}) is {'' if recorded else 'not '}"
            f"recorded: {_WHY[i]}.",
            "the magics record their own messages, and a cell that drives the extension is not your work.",
        )  # fmt: skip
    report(name, f"{answer}.")


def bar_chart_png(values: dict[str, int]) -> bytes:
    """A bar chart of ``values`` as PNG bytes, drawn by hand (no plotting library): one bar per key, one pixel
    high per two units, in red, green, blue… on white."""
    white, colours = (255, 255, 255), [(208, 64, 64), (64, 160, 64), (64, 96, 208)]
    columns: list[list[tuple[int, int, int]]] = []
    for i, value in enumerate(values.values()):  # a gap, then the bar
        bar = [white] * (64 - value // 2) + [colours[i % len(colours)]] * (value // 2)
        columns += [[white] * 64] * 8 + [bar] * 24
    columns += [[white] * 64] * 8
    rows = [list(row) for row in zip(*columns, strict=True)]

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    raw = b"".join(b"\x00" + bytes(c for pixel in row for c in pixel) for row in rows)
    head = struct.pack(">IIBBBBB", len(rows[0]), len(rows), 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", head) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")


def shortened(value: Any) -> Any:
    """``value`` with every image's base64 cut to its start, for reading."""
    if isinstance(value, dict):
        return {k: v[:24] + "…" if k == "data" and isinstance(v, str) else shortened(v) for k, v in value.items()}
    if isinstance(value, list):
        return [shortened(v) for v in value]
    return value
