"""IPython's own ``%config PiNotebook.<name> = value`` (#26 item 1): it reaches the extension's settings, the next
``%%agent`` runs with them, a refused value is said and not kept, and ``%agent_config`` tells where each value came
from. A real IPython shell (the ``shell`` fixture) and the scripted faux model."""

from __future__ import annotations

import logging
from copy import deepcopy

import pytest
from IPython.core.interactiveshell import InteractiveShell
from traitlets.config import Config

from pi_notebook.ai import faux
from pi_notebook.notebook.config import PiNotebook


@pytest.fixture(autouse=True)
def _shell_config_restored():
    """IPython's %config also merges what it sets into the shell's own config, which outlives a test: put it back."""
    ip = InteractiveShell.instance()
    saved = deepcopy(ip.config)
    yield
    ip.config = saved


def rows(shell, capsys) -> dict[str, tuple[str, str]]:
    """``%agent_config``'s table: name -> (where the value came from, the value as shown)."""
    capsys.readouterr()
    shell.cell("%agent_config")
    table = {}
    for line in capsys.readouterr().out.splitlines():
        name, _, rest = line.partition("  ")
        if name in PiNotebook.class_trait_names(config=True):
            origin, _, value = rest.strip().partition("  ")
            table[name] = (origin.strip(), value.strip())
    return table


def config_errors(caplog) -> list[str]:
    """What IPython's ``%config`` reported (it logs an error raised by a configurable, and goes on)."""
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]


def test_percent_config_sets_max_turns_and_the_next_run_stops_there(shell):
    shell.cell("%config PiNotebook.max_turns = 3")
    assert shell.session.config.max_turns == 3
    faux.set_responses([lambda: [faux.tool_call("ls", {"path": "."})]] * 10)
    shell.agent("Look everywhere.", "--model faux/faux-1 --tools ls")
    assert len(faux.calls) == 3  # not the default cap of 20


def test_percent_config_sets_the_model_and_the_tools_of_a_plain_agent_cell(shell):
    shell.cell('%config PiNotebook.default_model = "faux/faux-1"')
    shell.cell('%config PiNotebook.tools = "ls,read"')
    faux.set_responses(["from the configured model"])
    shell.cell("%%agent\nhi")
    assert shell.session.messages[-1].content[0].text == "from the configured model"
    assert [t.name for t in faux.calls[-1].tools] == ["ls", "read"]
    shell.cell('%config PiNotebook.tools = "none"')
    faux.set_responses(["no tools now"])
    shell.cell("%%agent\nagain")
    assert faux.calls[-1].tools is None


def test_percent_config_takes_python_values_from_the_namespace(shell):
    shell.cell("limit = 4")
    shell.cell("%config PiNotebook.max_turns = limit")
    shell.cell("%config PiNotebook.compaction = False")
    assert shell.session.config.max_turns == 4 and shell.session.config.compaction is False


@pytest.mark.parametrize(
    ("statement", "said"),
    [
        ("max_turns = -1", "PiNotebook.max_turns: must be 0 (no limit) or more, not -1; max_turns stays 20"),
        ("max_turns = '7'", "PiNotebook.max_turns: expected an int, not the str '7'.; max_turns stays 20"),
        ("tools = 'rm'", "PiNotebook.tools: unknown tool(s) rm; choose from read, bash"),
        ("thinking = 'hard'", "PiNotebook.thinking: must be one of off, minimal, low, medium, high, xhigh"),
        ("default_model = 'nobody/nothing'", "PiNotebook.default_model: "),
        ("max_turn = 7", "PiNotebook.max_turn: no such setting of PiNotebook (did you mean max_turns?"),
    ],
)
def test_a_refused_value_is_said_in_one_line_and_not_kept(shell, capsys, caplog, statement, said):
    before = rows(shell, capsys)
    shell.cell(f"%config PiNotebook.{statement}")
    errors = config_errors(caplog)
    assert len(errors) == 1 and errors[0].startswith(said) and "\n" not in errors[0]
    assert rows(shell, capsys) == before  # every value and where it came from, unchanged


def test_agent_config_says_where_each_value_came_from(shell, capsys):
    shell.ip.run_line_magic("unload_ext", "pi_notebook")
    shell.ip.config = Config({"PiNotebook": {"session_layout": "notebook", "warm_up": "no", "cells": "everything"}})
    try:
        shell.ip.run_line_magic("load_ext", "pi_notebook")
        assert "c.PiNotebook.cells = 'everything' is ignored" in capsys.readouterr().err
        shell.cell("%config PiNotebook.max_turns = 7")
        shell.cell("%agent_config thinking=low cells=errors")
        shell.session.config.keep_recent_tokens = 1000  # in Python
        table = rows(shell, capsys)
    finally:
        shell.ip.config = Config()
    assert table["session_layout"] == ("config file", "'notebook'")  # the default's value, set in the file
    assert table["warm_up"] == ("config file", "False")
    assert table["cells"] == ("%agent_config", "'errors'")  # the file's value was refused: then %agent_config
    assert table["max_turns"] == ("%config", "7")
    assert table["thinking"] == ("%agent_config", "'low'")
    assert table["keep_recent_tokens"] == ("Python", "1000")
    assert table["reserve_tokens"] == ("default", "16384")
    assert {origin for origin, _ in table.values()} == {"default", "config file", "%config", "%agent_config", "Python"}


def test_the_last_setter_wins_and_percent_config_does_not_bring_the_config_file_back(shell, capsys):
    shell.ip.run_line_magic("unload_ext", "pi_notebook")
    shell.ip.config = Config({"PiNotebook": {"max_turns": 5, "tools": "read"}})
    try:
        shell.ip.run_line_magic("load_ext", "pi_notebook")
        shell.cell("%agent_config max_turns=9")
        shell.cell('%config PiNotebook.thinking = "high"')  # traitlets' own update would apply the file again
        table = rows(shell, capsys)
        assert table["max_turns"] == ("%agent_config", "9")
        assert table["tools"] == ("config file", "'read'")
        shell.cell("%config PiNotebook.max_turns = 9")  # the same value, from another place
        assert rows(shell, capsys)["max_turns"] == ("%config", "9")
    finally:
        shell.ip.config = Config()


def test_percent_config_lists_and_explains_the_settings_only_while_loaded(shell, capsys):
    capsys.readouterr()
    shell.cell("%config")
    assert "    PiNotebook\n" in capsys.readouterr().out
    shell.cell("%config PiNotebook.max_turns = 6")
    shell.cell("%config PiNotebook")
    help_text = capsys.readouterr().out
    assert "PiNotebook.max_turns=<Int>" in help_text and "Current: 6" in help_text
    assert shell.cell("%config PiNotebook.max_turns").result == 6

    shell.ip.run_line_magic("reload_ext", "pi_notebook")
    settings = [c for c in shell.ip.configurables if isinstance(c, PiNotebook)]
    assert settings == [shell.session.config]  # the new one only
    assert shell.session.config.max_turns == 6  # IPython keeps what %config set in the shell's config too

    shell.ip.run_line_magic("unload_ext", "pi_notebook")
    try:
        assert not any(isinstance(c, PiNotebook) for c in shell.ip.configurables)
        capsys.readouterr()
        shell.cell("%config")
        assert "PiNotebook" not in capsys.readouterr().out
    finally:
        shell.ip.run_line_magic("load_ext", "pi_notebook")  # the fixture unloads it
