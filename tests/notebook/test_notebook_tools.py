"""The agent works in the notebook (#23): ``vars`` reads the namespace, ``python`` runs code in the kernel, ``new_cell``
puts a cell below. A real IPython shell and the scripted faux model calling the tools through ``%%agent``; a real
Jupyter kernel for the stop button and for the reply that carries the new cell."""

from __future__ import annotations

import asyncio
import base64
import json
import time
from pathlib import Path

import pytest
from IPython.core.error import UsageError

from pi_notebook.ai import faux
from pi_notebook.ai.types import ToolResultMessage
from pi_notebook.coding_agent.run_policy import (
    DEFAULT_SYSTEM_PROMPT,
    SessionSettings,
    default_tools,
    parse_tools,
    plan_run,
)
from pi_notebook.notebook.cell_message import NotebookCellMessage
from pi_notebook.notebook.forms import message_form
from pi_notebook.notebook.render import message_text
from pi_notebook.notebook.tools.namespace import REPR_SECONDS, user_variables
from pi_notebook.notebook.tools.python import NEEDS_A_RUN, create_python_tool
from tests.reliability.test_real_kernel import kernels  # noqa: F401 (the fixture)

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
TOOLS = "--model faux/faux-1 --tools vars,python,new_cell"


@pytest.fixture(autouse=True)
def own_namespace(shell):
    """The test's variables only (the IPython shell is one per process): earlier tests' variables are put aside and
    come back after, and what the test defined goes."""
    ns = shell.ip.user_ns
    kept = {name: ns.pop(name) for name in list(user_variables(shell.ip))}
    yield
    for name in list(user_variables(shell.ip)):
        del ns[name]
    ns.update(kept)


def results(shell) -> list[ToolResultMessage]:
    return [m for m in shell.session.messages if isinstance(m, ToolResultMessage)]


def text_of(result: ToolResultMessage) -> str:
    return "\n".join(b.text for b in result.content if b.type == "text")


def ask(shell, *steps, prompt: str = "Look at my data."):
    """``%%agent`` with the model scripted to make ``steps`` (tool calls), then say "done"; the new tool results."""
    before = len(results(shell))
    faux.set_responses([*[[step] for step in steps], "done"])
    shell.agent(prompt, TOOLS)
    return results(shell)[before:]


# --- the tools a run gets -----------------------------------------------------------------------------------


def test_the_notebook_tools_are_known_to_tools_settings_and_join_the_defaults(shell):
    assert default_tools() == "read,bash,edit,write,python,vars,new_cell"
    assert default_tools(small=True) == "read,ls,vars"  # read-only only: the small model gains vars alone
    with pytest.raises(
        ValueError, match=r"choose from read, bash, edit, write, grep, find, ls, python, vars, new_cell"
    ):
        parse_tools("read,pyhton")
    with pytest.raises(UsageError, match=r"--tools: unknown tool.* pyhton; choose from .*python, vars, new_cell"):
        shell.cell("%%agent --model faux/faux-1 --tools pyhton\nhi").raise_error()
    shell.cell("%agent_config tools=vars,python")
    assert shell.session.config.tools == "vars,python"
    # the offline model: while the setting is a default (Pi's or the notebook's), its own read-only set
    local = shell.session.resolve_model("local")
    for spec in ("read,bash,edit,write", default_tools()):
        settings = SessionSettings(tools=spec, system_prompt=DEFAULT_SYSTEM_PROMPT)
        assert plan_run(settings, local).tool_names == ("read", "ls", "vars")
    cloud = plan_run(SessionSettings(tools=default_tools()), faux.model())
    assert cloud.tool_names == ("read", "bash", "edit", "write", "python", "vars", "new_cell")


def test_the_offline_models_vars_tool_may_name_only_the_notebooks_data_variables(shell):
    """For a very small model, ``vars``'s ``name`` lists the notebook's data variables (as a path tool's ``path``
    lists the files): a prompt naming one gets a call on it. Larger models keep the free-form name."""
    from pi_notebook.ai.providers.local_prompt import tool_mode
    from pi_notebook.ai.types import UserMessage

    shell.cell("import os\ntotal = 58\nx = 1\ndef helper(): pass").raise_error()
    local = shell.session.resolve_model("local")
    settings = SessionSettings(tools=default_tools(), system_prompt=DEFAULT_SYSTEM_PROMPT)
    small = {t.name: t for t in plan_run(settings, local).tools(".")}
    names = small["vars"].parameters["properties"]["name"]["enum"]
    assert "total" in names and not {"os", "x", "helper"} & set(names)  # no modules, functions, one-letter names
    big = {t.name: t for t in plan_run(settings, faux.model()).tools(".")}
    assert "enum" not in big["vars"].parameters["properties"]["name"]
    tools = [t.to_tool() for t in small.values()]
    mode, allowed = tool_mode([UserMessage(content="What is the value of total in my notebook?")], tools, 1)
    assert mode == "call" and [t.name for t in allowed] == ["vars"]
    assert allowed[0].parameters["properties"]["name"]["enum"] == ["total"]
    assert tool_mode([UserMessage(content="What is the capital of France?")], tools, 1)[0] == "auto"


# --- vars ---------------------------------------------------------------------------------------------------


SETUP = """
import numpy as np
x = 42
names = ['ada', 'grace']
prices = np.array([3.5, -1.0, 2.25, -0.5])
orders = np.array([('tea', 3.5), ('cake', -1.0), ('jam', 2.25)], dtype=[('item', 'U8'), ('price', 'f8')])

class Slow:
    def __repr__(self):
        import time
        time.sleep(30)
        return 'never'

class Broken:
    def __repr__(self):
        raise ValueError('no repr')

class Counted(list):
    calls = 0
    def __len__(self):
        Counted.calls += 1
        return 0

slow, broken, counted = Slow(), Broken(), Counted()
def clean(frame, column='price'):
    return frame
"""


def test_vars_lists_the_namespace_with_types_sizes_and_arrays_without_running_the_users_code(shell):
    shell.ip.run_cell("y = 1\ny", store_history=True)  # leaves _, _1, _i1, Out... in the namespace
    shell.cell(SETUP)
    started = time.monotonic()
    [listing] = ask(shell, faux.tool_call("vars", {}))
    took = time.monotonic() - started
    text = text_of(listing)
    assert not listing.is_error
    lines = text.splitlines()
    assert "x: int = 42" in lines
    assert "names: list, len 2 = ['ada', 'grace']" in lines
    assert "prices: numpy.ndarray, shape (4,), dtype float64, 32B" in lines
    assert "orders: numpy.ndarray, shape (3,), dtype [('item', '<U8'), ('price', '<f8')], 120B" in lines
    assert "  fields: item (<U8), price (float64)" in lines
    assert any("('cake', -1.  )" in line for line in lines)  # the rows, as numpy prints them
    assert f"slow: Slow = (not shown: it took longer than {REPR_SECONDS:g} s)" in lines
    assert "broken: Broken = (not shown: its repr raised ValueError)" in lines
    assert "Modules: np (numpy)" in lines and "Functions: clean(frame, column='price')" in lines
    assert "Classes: Slow, Broken, Counted" in lines
    assert shell.ip.user_ns["Counted"].calls == 0  # a user's __len__ is never called
    for name in ("In", "Out", "_", "_1", "_i1", "exit", "quit", "get_ipython", "__session__"):
        assert not any(line.startswith(f"{name}:") for line in lines), name
    assert took < 10  # the 30-second repr was cut at half a second
    # the model read exactly that
    assert text in json.dumps([m.to_pi_json() for m in faux.calls[-1].messages], ensure_ascii=False).replace(
        "\\n", "\n"
    )


def test_vars_with_a_name_shows_one_variable_in_more_detail_and_an_unknown_name_lists_the_variables(shell):
    shell.cell("import numpy as np\nbig = np.arange(1000)\nx = 1")
    one, unknown = ask(shell, faux.tool_call("vars", {"name": "big"}), faux.tool_call("vars", {"name": "nope"}))
    assert text_of(one).startswith("big: numpy.ndarray, shape (1000,), dtype int64, 7.8KB\n")
    assert "..." in text_of(one)  # numpy's own summary of a long array
    assert unknown.is_error and text_of(unknown) == "No variable 'nope' in the notebook. Its variables: np, big, x"


def test_vars_describes_a_pandas_dataframe_shape_columns_and_first_rows(shell):
    pytest.importorskip("pandas")
    shell.cell("import pandas as pd\ndf = pd.DataFrame({'item': ['tea', 'cake', 'jam'], 'price': [3.5, -1.0, 2.25]})")
    [listing] = ask(shell, faux.tool_call("vars", {}))
    text = text_of(listing)
    assert "df: pandas.DataFrame, 3 rows × 2 columns" in text
    assert "  columns: item (object), price (float64)" in text or "  columns: item (str), price (float64)" in text
    assert "cake" in text and "-1.00" in text


# --- python -------------------------------------------------------------------------------------------------


def test_python_runs_in_the_users_namespace_and_returns_output_and_the_last_value(shell):
    shell.cell("import numpy as np\nprices = np.array([3.5, -1.0, 2.25, -0.5])")
    [run] = ask(
        shell,
        faux.tool_call(
            "python",
            {
                "code": "import sys\nprint('rows', len(prices))\nprint('careful', file=sys.stderr)\n"
                "negative = int((prices < 0).sum())\nnegative"
            },
        ),
        prompt="How many prices are negative?",
    )
    assert not run.is_error and text_of(run) == "rows 4\ncareful\n2"
    assert shell.ip.user_ns["negative"] == 2  # defined for the user too, as a cell would
    assert "_" not in shell.ip.user_ns or shell.ip.user_ns["_"] != 2  # not a cell: no Out, no _
    # the agent's code is its tool result, not a recorded cell; nothing reached the %%agent cell's output
    assert [m.role for m in shell.session.messages if isinstance(m, NotebookCellMessage)] == ["notebookCell"]
    quiet, nothing = ask(
        shell, faux.tool_call("python", {"code": "1 + 1;"}), faux.tool_call("python", {"code": "z = 3"})
    )
    assert text_of(quiet) == text_of(nothing) == "(no output)"


def test_python_returns_a_matplotlib_figure_and_a_displayed_image_as_images(shell):
    pytest.importorskip("matplotlib")
    code = (
        "import matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\n"
        f"from IPython.display import Image, display\ndisplay(Image(data={PNG!r}.encode(), format='png'))\n"
        "plt.plot([3, 1, 2])\nplt.title('prices')\nprint('drawn')"
    )
    [run] = ask(shell, faux.tool_call("python", {"code": code}))
    images = [b for b in run.content if b.type == "image"]
    assert [b.mime_type for b in images] == ["image/png", "image/png"]
    assert base64.b64decode(images[1].data).startswith(b"\x89PNG") and len(images[1].data) > 5000  # the plot
    assert text_of(run).startswith("drawn\n") and "[2 images attached]" in text_of(run)
    import matplotlib.pyplot as plt

    assert plt.get_fignums() == []  # drawn and closed, as the inline backend does at a cell's end
    # a model that sees images gets them (the faux model reads images)
    sent = faux.calls[-1].messages[-1]
    assert [b.type for b in sent.content] == ["text", "image", "image"]


def test_python_failures_are_error_results_with_the_traceback_and_the_run_goes_on(shell):
    shell.cell("d = {'a': 1}")
    failed, syntax, exited, after = ask(
        shell,
        faux.tool_call("python", {"code": "print('looking')\nd['b']"}),
        faux.tool_call("python", {"code": "x = = 1"}),
        faux.tool_call("python", {"code": "raise SystemExit(3)"}),
        faux.tool_call("python", {"code": "d.get('b', 0)"}),
    )
    assert failed.is_error and text_of(failed).startswith("looking\n\n---")
    assert "----> 2 d['b']" in text_of(failed) and text_of(failed).endswith("KeyError: 'b'")
    assert "During handling" not in text_of(failed) and "runner.py" not in text_of(failed)  # the code's frames only
    assert syntax.is_error and text_of(syntax).endswith("SyntaxError: invalid syntax")
    assert exited.is_error and "SystemExit: 3" in text_of(exited)
    assert not after.is_error and text_of(after) == "0"
    assert shell.session.messages[-1].content[0].text == "done"
    # the static forms: the output, the error's line, the traceback
    form = message_text(failed.to_pi_json())
    assert form.startswith("[tool result: python] (✗ error)\nlooking\n✗ error: KeyError: 'b'\n---")


def test_python_times_out_keeps_what_it_printed_and_the_kernel_goes_on(shell):
    started = time.monotonic()
    [slow] = ask(
        shell,
        faux.tool_call(
            "python", {"code": "import time\nprint('started')\nstate = 'before'\ntime.sleep(30)", "timeout": 0.5}
        ),
    )
    assert time.monotonic() - started < 10
    assert slow.is_error and text_of(slow) == (
        "started\n\nTimed out after 0.5 seconds: the code was interrupted (what it did before is kept in the kernel). "
        "Give a larger timeout if it needs longer."
    )
    assert shell.ip.user_ns["state"] == "before"
    [caught] = ask(
        shell,
        faux.tool_call("python", {"code": "try:\n    time.sleep(30)\nexcept Exception:\n    pass", "timeout": 0.3}),
    )
    assert caught.is_error and "Timed out after 0.3 seconds" in text_of(caught)  # `except Exception` cannot keep it


def test_python_output_is_bounded_like_a_bash_output(shell):
    [loud] = ask(shell, faux.tool_call("python", {"code": "for i in range(200_000):\n    print('line', i)"}))
    text = text_of(loud)
    assert len(text.encode()) < 60 * 1024 and text.splitlines()[0].startswith("line 1")
    assert "line 199999\n\n[Output truncated: this is its end. Full output: " in text
    path = loud.details["fullOutputPath"]
    assert Path(path).read_text().count("\n") == 200_000
    Path(path).unlink()
    code = f"from IPython.display import Image, display\nfor _ in range(6):\n    display(Image(data={PNG!r}.encode()))"
    [many] = ask(shell, faux.tool_call("python", {"code": code}))
    assert len([b for b in many.content if b.type == "image"]) == 4
    assert "[2 more images were left out (a cell keeps 4)]" in text_of(many)


def test_python_outside_a_notebook_run_says_it_needs_one(shell):
    tool = create_python_tool(shell=shell.ip)
    with pytest.raises(Exception, match="during a %%agent run"):
        asyncio.run(tool.run("c1", {"code": "1"}, None, lambda _: None))
    assert NEEDS_A_RUN.startswith("The python tool runs code in a notebook's kernel")


# --- new_cell -----------------------------------------------------------------------------------------------


def test_new_cell_puts_one_unrun_cell_below_and_several_calls_fill_it(shell):
    first, second = ask(
        shell,
        faux.tool_call("new_cell", {"source": "clean = orders[orders['price'] >= 0]"}),
        faux.tool_call("new_cell", {"source": "Rows with a negative price are dropped.", "kind": "markdown"}),
        prompt="Put the cleaning code in a cell",
    )
    assert text_of(first).startswith("A new cell is below the running cell, not run: a code cell.")
    assert text_of(second).startswith("Added to the new cell below (one run adds one cell): it now holds 2 parts")
    assert shell.ip.rl_next_input == (
        "clean = orders[orders['price'] >= 0]\n\n# Rows with a negative price are dropped."
    )
    assert "clean" not in shell.ip.user_ns  # never run
    [markdown] = ask(
        shell, faux.tool_call("new_cell", {"source": "# Cleaning\nDrop negative prices.", "kind": "markdown"})
    )
    assert shell.ip.rl_next_input == "%%markdown\n# Cleaning\nDrop negative prices."  # a new run: a new cell
    assert "a %%markdown cell" in text_of(markdown)
    [empty] = ask(shell, faux.tool_call("new_cell", {"source": "  \n"}))
    assert empty.is_error and text_of(empty) == "new_cell needs the cell's source: it was empty."
    assert message_form(first).header.name == "new_cell"


def test_vars_describes_a_polars_dataframe(shell):
    pytest.importorskip("polars")
    shell.cell("import polars as pl\nframe = pl.DataFrame({'item': ['tea', 'cake'], 'price': [3.5, -1.0]})")
    [listing] = ask(shell, faux.tool_call("vars", {}))
    assert "frame: polars.DataFrame, 2 rows × 2 columns" in text_of(listing)
    assert "  columns: item (String), price (Float64)" in text_of(listing) and "cake" in text_of(listing)


# --- a real kernel: the stop button, and the reply that carries the new cell ------------------------------------

KERNEL_SETUP = (
    "%load_ext pi_notebook\nimport json, os, pi_notebook\nfrom pi_notebook.ai import faux\n"
    "pi_notebook.current_session().config.cells = 'off'"
)  # cells=off: these cells script the model


def _reply(kernel, msg_id: str, timeout: float = 60) -> dict:
    """The execute_reply of ``msg_id`` (what the front end acts on: its status, its payloads)."""
    deadline = time.monotonic() + timeout
    while True:
        message = kernel.kc.get_shell_msg(timeout=max(0.1, deadline - time.monotonic()))
        if message["parent_header"].get("msg_id") == msg_id:
            return message["content"]


def test_the_stop_button_interrupts_python_as_it_interrupts_a_cell_and_stops_the_run(kernels, tmp_path):  # noqa: F811
    kernel = kernels()
    kernel.run(KERNEL_SETUP)
    code = "import time\nstate = 'started'\nprint('started')\nopen('running', 'w').close()\ntime.sleep(120)"
    kernel.run(f"faux.set_responses([[faux.tool_call('python', {{'code': {code!r}}})], 'never said'])")
    msg_id = kernel.send(f"%%agent {TOOLS}\nCount slowly.", cell_id="c1")
    deadline = time.monotonic() + 60
    while not (tmp_path / "running").exists():
        assert time.monotonic() < deadline, "the python call never started"
        time.sleep(0.05)
    pressed = time.monotonic()
    kernel.km.interrupt_kernel()
    reply = kernel.watch(msg_id, timeout=30)
    assert time.monotonic() - pressed < 5
    (error,) = reply.errors
    assert error["ename"] == "CellInterrupted"
    *_, result, last = kernel.messages()
    assert result["role"] == "toolResult" and result["isError"] is True
    assert (
        result["content"][0]["text"] == "started\n\nInterrupted: the user pressed the stop button; the run stops here."
    )
    assert last["role"] == "assistant" and last["stopReason"] == "aborted"  # the model was asked nothing more
    assert kernel.run("print(state, faux.provider.pending_count)").strip() == "started 1"  # the kernel goes on


def test_new_cell_reaches_the_front_end_as_one_set_next_input_in_the_agent_cells_reply(kernels):  # noqa: F811
    kernel = kernels()
    kernel.run(KERNEL_SETUP)
    kernel.run(
        "faux.set_responses([[faux.tool_call('new_cell', {'source': 'clean = df[df.price >= 0]'})],"
        "[faux.tool_call('new_cell', {'source': 'clean.describe()'})], 'Below.'])"
    )
    msg_id = kernel.send(f"%%agent {TOOLS}\nPut the cleaning code in a cell", cell_id="c2")
    reply = _reply(kernel, msg_id)
    kernel.watch(msg_id)
    assert reply["status"] == "ok"
    cells = [p for p in reply["payload"] if p["source"] == "set_next_input"]
    assert cells == [
        {"source": "set_next_input", "text": "clean = df[df.price >= 0]\n\nclean.describe()", "replace": False}
    ]
    # the next execution starts a new cell
    kernel.run("faux.set_responses([[faux.tool_call('new_cell', {'source': 'x = 1'})], 'ok'])")
    msg_id = kernel.send(f"%%agent {TOOLS}\nAnother", cell_id="c3")
    assert [p["text"] for p in _reply(kernel, msg_id)["payload"] if p["source"] == "set_next_input"] == ["x = 1"]
    kernel.watch(msg_id)
