"""Every statement in a teaching notebook about what an output shows is checked against that output (#25, item 2).

The convention (``notebooks/README.md``, *Text that matches the outputs*): a status the text says an output shows
is written in italics (``*dropped*``); a count of providers, roles or messages (a digit, or a number word from
two up, right before the noun, in a sentence about an output) is a claim too. Each claim needs a ``check`` cell
(tagged ``check``, source hidden) among the code cells next to the text (those between it and the markdown before
or after it) that names it in a :func:`~pi_notebook.lessons.shows.shows` call: ``dropped=[...]``,
``providers=4``. nbval runs that cell, so the output must show what the text says; this test makes sure the
check is there.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from pi_notebook.agent_core import AgentMessage
from pi_notebook.ai import AssistantMessage, TextContent, UserMessage
from pi_notebook.coding_agent import BashExecutionMessage
from pi_notebook.lessons.shows import TextMismatch, shows
from pi_notebook.notebook.inspector import inspect

NOTEBOOKS = sorted((Path(__file__).resolve().parent.parent / "notebooks").glob("[0-9][0-9]-*.ipynb"))
NUMBERS = ["one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve"]
STATUS = re.compile(r"(?<![\w*])[*_](passed|translated|dropped|summari[sz]ed|injected)[*_](?![\w*])")
COUNT = re.compile(rf"\b(\d+|{'|'.join(NUMBERS[1:])})\s+(providers?|APIs?|roles?|messages?)\b", re.IGNORECASE)
ABOUT_OUTPUT = re.compile(
    r"\b(above|below|shows?|shown|output|inspector|request panel|prints?|printed|table|rows?)\b", re.IGNORECASE
)
NOUN_KEY = {"provider": "providers", "api": "providers", "role": "roles", "message": "messages"}


def _text(cell: dict) -> str:
    """A markdown cell's prose: code blocks and inline code left out (``code`` is not a claim)."""
    source = "".join(cell["source"])
    source = re.sub(r"```.*?```", " ", source, flags=re.DOTALL)
    return re.sub(r"`+[^`]*`+", " ", source)


def claims(text: str) -> list[tuple[str, str]]:
    """What ``text`` says an output shows, as (keyword of :func:`shows`, the value it needs or ``""``)."""
    found = [(m.group(1).lower().replace("summarized", "summarised"), "") for m in STATUS.finditer(text)]
    for sentence in re.split(r"(?<=[.:;!?])\s+|\n\s*\n", text):
        if not ABOUT_OUTPUT.search(sentence):
            continue
        for m in COUNT.finditer(sentence):
            number = m.group(1).lower()
            value = str(NUMBERS.index(number) + 1) if number in NUMBERS else number
            found.append((NOUN_KEY[m.group(2).lower().rstrip("s")], value))
    return found


def is_check(cell: dict) -> bool:
    return cell["cell_type"] == "code" and "check" in cell.get("metadata", {}).get("tags", [])


def neighbours(cells: list[dict], index: int) -> list[dict]:
    """The code cells between the markdown before ``index`` and the one after it."""
    out = []
    for step in (-1, 1):
        i = index + step
        while 0 <= i < len(cells) and cells[i]["cell_type"] == "code":
            out.append(cells[i])
            i += step
    return out


def covers(check: dict, keyword: str, value: str) -> bool:
    source = "".join(check["source"])
    if "shows(" not in source:
        return False
    if value:
        return re.search(rf"\b{keyword}\s*=\s*{value}\b", source) is not None
    return re.search(rf"\b{keyword}\s*=", source) is not None


def unchecked(path: Path) -> list[str]:
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    missing = []
    for index, cell in enumerate(cells):
        if cell["cell_type"] != "markdown":
            continue
        checks = [c for c in neighbours(cells, index) if is_check(c)]
        for keyword, value in claims(_text(cell)):
            if not any(covers(c, keyword, value) for c in checks):
                said = f"{keyword}={value}" if value else keyword
                missing.append(f"cell {index} says {said!r} with no check cell next to it naming it")
    return missing


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name[:2] for p in NOTEBOOKS])
def test_what_the_text_says_an_output_shows_is_checked(path):
    assert unchecked(path) == []


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name[:2] for p in NOTEBOOKS])
def test_check_cells_are_hidden_and_call_shows(path):
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    for index, cell in enumerate(cells):
        if is_check(cell):
            assert cell["metadata"].get("jupyter", {}).get("source_hidden") is True, f"cell {index}"
            assert "shows(" in "".join(cell["source"]), f"cell {index}"


# --- the scanner and shows() themselves --------------------------------------------------------------------


def test_the_scanner_finds_italic_statuses_and_counts_said_of_an_output(tmp_path):
    text = (
        "**What to notice:** the `%bash` row was *translated*; the `%bash!` row was *dropped*. "
        "The request panel offers four providers. An LLM API knows three roles."
    )
    assert claims(text) == [("translated", ""), ("dropped", ""), ("providers", "4")]
    cell = {"cell_type": "markdown", "source": [text]}
    check = {"cell_type": "code", "metadata": {"tags": ["check"]}, "source": ["shows(_, translated=[1], dropped=[2])"]}
    nb = {"cells": [{"cell_type": "code", "metadata": {}, "source": ["inspect(x)"]}, check, cell]}
    path = tmp_path / "case.ipynb"
    path.write_text(json.dumps(nb), encoding="utf-8")
    assert unchecked(path) == ["cell 2 says 'providers=4' with no check cell next to it naming it"]


HISTORY: list[AgentMessage] = [
    UserMessage(content="List the folder.", timestamp=1),
    BashExecutionMessage(command="ls", output="a.txt", exit_code=0, timestamp=2),
    BashExecutionMessage(command="cat .env", output="KEY=1", exit_code=0, exclude_from_context=True, timestamp=3),
    AssistantMessage(content=[TextContent(text="One file.")], api="faux", provider="faux", model="faux-1", timestamp=4),
]


def test_shows_passes_when_the_text_is_true_and_names_each_difference_when_not():
    insp = inspect(HISTORY)
    shows(insp, passed=[0, 3], translated=[1], dropped=[2], sent=3, messages=4, roles=3)
    shows(insp, roles={"user": 1, "bashExecution": 2, "assistant": 1}, dropped=True, translated=1)
    shows(insp, providers=len(insp.requests))
    with pytest.raises(TextMismatch) as wrong:
        shows(insp, dropped=[1, 2], summarised=True, providers=len(insp.requests) + 1)
    said = str(wrong.value)
    assert "[1, 2] dropped: the rows that have it are [2]" in said
    assert "True summarised: no row has it" in said
    assert f"offers {len(insp.requests)} request bodies" in said
    assert "1:bashExecution translated" in said
    with pytest.raises(TextMismatch, match="4 messages are shown"):
        shows(HISTORY, messages=5)
    with pytest.raises(TypeError, match="does not know"):
        shows(insp, dropt=[2])
