"""The agent sees the notebook (#22): the cells you run join the history as ``notebookCell`` messages, and what the
model is sent of them is exactly what the inspector shows. A real IPython shell, the faux provider."""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path

import pytest

import pi_notebook
from pi_notebook.agent_core import convert_to_llm, from_pi_json
from pi_notebook.ai import faux
from pi_notebook.coding_agent.context_pipeline import IMAGE_OMITTED
from pi_notebook.notebook.cell_message import NotebookCellMessage
from pi_notebook.notebook.cell_recorder import MAX_IMAGES, is_own_cell

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)
SHOW_PNG = f"from IPython.display import Image, display\ndisplay(Image({PNG!r}))"


def cells(shell) -> list[NotebookCellMessage]:
    return [m for m in shell.session.messages if isinstance(m, NotebookCellMessage)]


def sent_text(call) -> str:
    return json.dumps([m.to_pi_json() for m in call.messages])


def test_a_cell_that_prints_and_returns_is_recorded_as_it_ran(shell):
    shell.cell("x = [3, 1, 2]\nprint('sorted', sorted(x))\nx")
    [cell] = cells(shell)
    assert cell.source.startswith("x = [3, 1, 2]") and cell.output == "sorted [1, 2, 3]\n[3, 1, 2]\n"
    assert cell.error is None and cell.images == [] and not cell.truncated


def test_why_did_my_cell_fail_reaches_the_model_with_the_cell_and_its_traceback(shell):
    shell.cell("x = [3, 1, 2]")
    shell.cell("d = {'a': 1}\nd['b']")
    [_, failed] = cells(shell)
    assert failed.error.name == "KeyError" and failed.error.value == "'b'"
    assert "d['b']" in failed.error.traceback and "\x1b" not in failed.error.traceback  # as shown, no colours
    faux.set_responses(["The key 'b' is not in d."])
    shell.agent("Why did the last cell fail?")
    sent = sent_text(faux.calls[-1])
    assert "x = [3, 1, 2]" in sent and "d['b']" in sent and "KeyError: 'b'" in sent
    # and the inspector shows the same request (the faux provider receives the context as it is)
    inspector = pi_notebook.inspect(shell.session)
    body = json.dumps(inspector.requests["faux (faux-1)"])
    assert "The cell failed with KeyError: 'b'" in body
    assert [r["status"] for r in inspector.rows if r["role"] == "notebookCell"] == ["translated", "translated"]
    inspector.close()


def test_an_image_reaches_a_model_that_sees_images_and_a_placeholder_reaches_one_that_does_not(shell):
    shell.cell(SHOW_PNG)
    [cell] = cells(shell)
    assert [i.mime_type for i in cell.images] == ["image/png"] and cell.images[0].data == base64.b64encode(PNG).decode()
    faux.set_responses(["A red dot.", "A picture."])
    seeing = faux.model("eyes", input=["text", "image"])
    blind = faux.model("blind", input=["text"])
    shell.session.run_prompt("What does the plot show?", model=seeing, tools=[])
    assert [b.type for b in faux.calls[-1].messages[0].content] == ["text", "image"]
    shell.session.run_prompt("And now?", model=blind, tools=[])
    blocks = faux.calls[-1].messages[0].content
    assert [b.type for b in blocks] == ["text", "text"] and blocks[1].text == IMAGE_OMITTED


def test_the_magics_cells_record_themselves_and_are_not_recorded_twice(shell):
    shell.cell("%bash echo hi")
    shell.cell("%agent_config cells=all")
    faux.set_responses(["ok"])
    shell.agent("hello")
    assert cells(shell) == []
    assert [m.role for m in shell.session.messages] == ["bashExecution", "user", "assistant"]
    assert is_own_cell("# a comment\n%%agent --new\nhi") and is_own_cell("%load_ext pi_notebook")
    assert is_own_cell("insp = pi_notebook.inspect(pi_notebook.current_session())\ninsp")
    assert not is_own_cell("pi_notebooks = 3") and not is_own_cell("x = 1\npi_notebook.show(x)")
    assert is_own_cell("pi_notebook.inspect(pi_notebook.current_session())") and is_own_cell("import pi_notebook")
    assert not is_own_cell("%agent_private\nx = 1") and not is_own_cell("!ls\nx = 1") and not is_own_cell("y = 2")
    assert not is_own_cell("import pandas as pd  # (pi_notebook reads it later)")


def test_cells_errors_records_only_the_cells_that_fail_and_off_none(shell):
    shell.cell("%agent_config cells=errors")
    shell.cell("a = 1")
    shell.cell("1 / 0")
    assert [c.error.name for c in cells(shell)] == ["ZeroDivisionError"]
    shell.cell("%agent_config cells=off")
    shell.cell("1 / 0")
    assert len(cells(shell)) == 1
    result = shell.cell("%agent_config cells=some")
    assert "cells: must be one of all, errors, off" in str(result.error_in_exec)


def test_a_private_cell_is_shown_and_stored_never_sent(shell):
    shell.cell("%agent_private\nnote = 'not for the model'\nprint(note)")
    [cell] = cells(shell)
    assert cell.exclude_from_context is True and cell.output == "not for the model\n"
    assert convert_to_llm([cell]) == []
    faux.set_responses(["ok"])
    shell.agent("hi")
    assert "not for the model" not in sent_text(faux.calls[-1])


def test_ten_thousand_lines_keep_a_tail_and_the_whole_in_a_file(shell):
    shell.cell("for i in range(10000): print(f'line {i}')")
    [cell] = cells(shell)
    assert cell.truncated and cell.output.endswith("line 9999\n") and len(cell.output) < 60_000
    full = Path(cell.full_output_path)
    assert full.read_text().count("\n") == 10000
    assert f"[Output truncated. Full output: {full}]" in convert_to_llm([cell])[0].content[0].text


def test_a_huge_repr_and_binary_junk_stay_bounded(shell):
    shell.cell("class Big:\n    def __repr__(self): return 'row\\n' * 5_000_000\nBig()")
    shell.cell("import sys\nsys.stdout.write(bytes(range(256)).decode('latin-1') * 100)")
    big, junk = cells(shell)
    assert big.truncated and len(big.output) < 60_000  # 20 MB of repr: its tail, and the rest in a file
    assert not any(ord(c) < 32 and c not in "\n\t" for c in junk.output)  # control characters dropped


def test_a_huge_image_and_too_many_images_are_named_not_kept(shell):
    shell.cell("from IPython.display import Image, display\ndisplay(Image(b'\\x89PNG' + bytes(21_000_000)))")
    shell.cell(SHOW_PNG.replace("display(Image(", "for _ in range(6): display(Image("))
    huge, many = cells(shell)
    assert huge.images == [] and huge.omitted == ["an image/png of 20.0 MB was left out: larger than 4.0 MB"]
    assert len(many.images) == MAX_IMAGES and many.omitted == ["2 more images were left out (a cell keeps 4)"]
    assert "[2 more images were left out (a cell keeps 4)]" in convert_to_llm([many])[0].content[0].text


def test_an_interrupted_cell_is_recorded_as_interrupted(shell):
    shell.cell("print('working')\nraise KeyboardInterrupt")
    [cell] = cells(shell)
    assert cell.cancelled and cell.error.name == "KeyboardInterrupt" and cell.output == "working\n"


def test_a_secret_a_cell_prints_is_masked_and_said_so_once(shell, monkeypatch, capsys):
    token = "ghp_" + "Ab1Cd2Ef" + "Gh3Ij4Kl"
    monkeypatch.setenv("GH_TOKEN", token)
    shell.cell("import os\nprint(os.environ['GH_TOKEN'])")
    [cell] = cells(shell)
    assert cell.output == "[masked: GH_TOKEN]\n"
    assert token not in shell.session.file.path.read_text()
    out = capsys.readouterr().out
    assert out.count("pi_notebook: masked GH_TOKEN in this cell") == 1


def test_cells_come_back_after_a_restart(shell):
    shell.cell(SHOW_PNG)
    shell.cell("1 / 0")
    before = [c.to_pi_json() for c in cells(shell)]
    shell.ip.run_line_magic("unload_ext", "pi_notebook")
    shell.ip.run_line_magic("load_ext", "pi_notebook")  # what a restarted kernel does
    assert [c.to_pi_json() for c in cells(shell)] == before
    assert isinstance(from_pi_json(before[0]), NotebookCellMessage)


def test_agent_fix_puts_a_corrected_cell_below_and_does_not_run_it(shell):
    shell.cell("d = {'a': 1}\nd['b']")
    reply = "The key is 'a', not 'b'.\n\n```python\nd = {'a': 1}\nd['a']\n```"
    faux.set_responses([reply])
    shell.cell("%agent_fix --model faux/faux-1")
    asked = sent_text(faux.calls[-1])
    assert "failed with KeyError: 'b'" in asked and "d['b']" in asked  # the cell and the question
    assert shell.ip.rl_next_input == "d = {'a': 1}\nd['a']"  # the next cell, for the user to run
    assert len(cells(shell)) == 1  # nothing was run


def test_agent_fix_without_a_failing_cell_says_so(shell):
    shell.cell("x = 1")
    result = shell.cell("%agent_fix")
    assert "no failing cell to fix" in str(result.error_in_exec)


@pytest.fixture(autouse=True)
def no_secrets(monkeypatch):
    for name in [n for n in os.environ if "TOKEN" in n or "API_KEY" in n or "SECRET" in n]:
        monkeypatch.delenv(name, raising=False)


def test_a_stream_kept_from_an_earlier_cell_writes_into_the_cell_running_now(shell):
    shell.cell("import sys\nkept = sys.stdout\nprint('first')")
    shell.cell("_ = kept.write('second\\n')")  # (a logging handler made in the first cell does the same)
    shell.cell("import pi_notebook\n_ = kept.write('while no cell is recorded\\n')")
    shell.cell("print('third')")
    assert [c.output for c in cells(shell)] == ["first\n", "second\n", "third\n"]
    assert not any(c.truncated or c.full_output_path for c in cells(shell))


def test_what_a_thread_started_earlier_prints_during_a_later_cell_is_counted_not_kept(shell):
    shell.cell(
        "import threading\ngo, done = threading.Event(), threading.Event()\n"
        "def later():\n    go.wait(); print('from the thread'); done.set()\n"
        "threading.Thread(target=later, daemon=True).start()"
    )
    shell.cell("go.set(); done.wait(5)\nprint('mine')")
    shell.cell(
        "helper = threading.Thread(target=lambda: print('a helper of this cell'))\nhelper.start(); helper.join()"
    )
    _, second, third = cells(shell)
    assert second.output == "mine\n"
    assert second.omitted == ["16 characters printed meanwhile by a thread an earlier cell started were left out"]
    assert third.output == "a helper of this cell\n" and third.omitted == []


def test_junk_in_an_error_is_kept_as_clean_text_and_a_huge_message_by_its_ends(shell):
    shell.cell("raise ValueError('v \\udfff \\x07 \\x1b[1mw\\x1b[0m')")
    shell.cell("raise ValueError('start ' + 'v' * 3_000_000 + ' end')")
    junk, huge = cells(shell)
    assert junk.error.value == "v ?  w" and "\x1b" not in junk.error.traceback and "\udfff" not in junk.error.traceback
    convert_to_llm([junk])[0].content[0].text.encode("utf-8")  # strict: no lone surrogate reaches a provider
    assert (
        huge.error.value.startswith("start v") and huge.error.value.endswith("v end") and len(huge.error.value) < 3000
    )
    assert len(huge.error.traceback) < 10_000 and huge.error.traceback.endswith(" end")


def test_many_huge_images_are_named_in_four_lines_and_the_rest_counted(shell):
    shell.cell(
        "from IPython.display import Image, display\nfor _ in range(7): display(Image(b'\\x89PNG' + bytes(5 << 20)))"
    )
    [cell] = cells(shell)
    too_large = "an image/png of 5.0 MB was left out: larger than 4.0 MB"
    assert cell.images == [] and cell.omitted == [too_large] * 4 + ["3 more images were left out (a cell keeps 4)"]
