"""Live widget updates carry only what changed (#12): the deltas the kernel sends, applied by the front end's own
code (node), give exactly the kernel's state; finished displays are released; the inspector traces only what
was appended and, in a kernel, does a long history's costly parts after the cell."""

from __future__ import annotations

import asyncio
import gc
import json
import shutil
import subprocess
import sys
import weakref
from pathlib import Path
from typing import Any

import pytest
from ipywidgets.widgets.widget import _instances

from pi_notebook.agent import BashExecutionMessage, CustomMessage, to_pi_json
from pi_notebook.ai import TextContent, ToolCall, ToolResultMessage, Usage, UserMessage, faux
from pi_notebook.coding_agent.trace import trace_boundary
from pi_notebook.notebook import inspector as inspector_module
from pi_notebook.notebook import inspector_source
from pi_notebook.notebook.inspector import LONG, STEP, InspectorWidget, inspect
from pi_notebook.notebook.widgets import TranscriptWidget, json_patch

WIDGETS = Path(__file__).resolve().parents[2] / "widgets"

pytestmark = pytest.mark.usefixtures("fresh_faux")

# Applies the kernel's comm messages as the front end does (initialize → followDeltas → model.set), in node.
NODE_APPLY = """
import { readFileSync } from "node:fs";
const { applyPatch } = await import("./src/live.js");
const { applyTranscriptDelta } = await import("./src/transcript.js");
const { applyInspectorDelta } = await import("./src/inspector.js");
const input = JSON.parse(readFileSync(0, "utf8"));
const out = input.cases.map((c) => {
  if (c.patch) return applyPatch(c.old, c.patch);
  const state = { ...c.state };
  const apply = c.kind === "transcript" ? applyTranscriptDelta : applyInspectorDelta;
  for (const data of c.messages) {
    // a comm message: a custom one (a delta) is applied, a state sync sets the traits it holds
    if (data.method === "update") Object.assign(state, data.state);
    else if (data.content?.pi === "delta") Object.assign(state, apply(data.content, (key) => state[key]));
  }
  return state;
});
process.stdout.write(JSON.stringify(out));
"""


def node_apply(cases: list[dict[str, Any]]) -> list[Any]:
    node = shutil.which("node")
    assert node is not None, "node is needed to run the front end's code (the widgets are built with it)"
    proc = subprocess.run(
        [node, "--input-type=module", "-e", NODE_APPLY],
        input=json.dumps({"cases": cases}),
        capture_output=True,
        text=True,
        cwd=WIDGETS,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


def capture(widget) -> list[dict[str, Any]]:
    """The comm messages ``widget`` sends from now on (the data of each)."""
    sent: list[dict[str, Any]] = []
    widget.comm.send = lambda *args, **kwargs: sent.append(kwargs.get("data", args[0] if args else None))
    return sent


def custom(sent: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [m["content"] for m in sent if m.get("method") == "custom"]


def user(text: str) -> UserMessage:
    return UserMessage(content=[TextContent(text=text)])


def test_json_patch_edits_give_the_new_value_in_the_front_end():
    cases = [
        ({"t": "Hel", "n": 1}, {"t": "Hello", "n": 2, "k": [1]}),
        ({"c": [{"type": "text", "text": "a"}]}, {"c": [{"type": "text", "text": "ab"}, {"type": "toolCall"}]}),
        ({"l": [1, 2, 3], "gone": True}, {"l": [1]}),
        ({"x": "abc"}, {"x": "xyz"}),  # not a continuation: set
        ({"x": 1}, {"x": True}),  # 1 == True in Python: still a change
        ({"x": {"y": [1, {"z": "q"}]}}, {"x": {"y": [1, {"z": "q!"}]}}),
        ([1, 2], {"a": 1}),
        ("", "text"),
        ({"a": None}, {"a": {"b": 1}}),
    ]
    patches = [json_patch(old, new) for old, new in cases]
    assert json_patch({"a": [1, {"b": "x"}]}, {"a": [1, {"b": "x"}]}) == []
    assert patches[0][0] == ["a", ["t"], "lo", 3]
    applied = node_apply([{"old": old, "patch": patch} for (old, _), patch in zip(cases, patches, strict=True)])
    assert applied == [new for _, new in cases]


def test_a_long_streamed_reply_costs_the_same_per_update_at_its_end_as_at_its_start():
    clock = [0.0]
    w = TranscriptWidget([user("go")], clock=lambda: clock[0])
    initial = {"messages": list(w.messages), "visibility": list(w.visibility), "streaming": w.streaming}
    sent = capture(w)
    text = ""
    for i in range(1500):  # 1,500 deltas of 8 characters over 15 s: at most 30 updates a second
        clock[0] += 0.01
        text += f" word{i % 1000:03d}"
        w.update(streaming=faux.message(text))
    final = [user("go"), faux.message(text)]
    w.finish(final)
    sizes = [len(json.dumps(m)) for m in sent]
    assert len(sent) <= 15 * 30 + 2 and max(sizes[:-1]) < 500  # each update: the few words since the last
    assert sum(sizes) < 2 * len(text) + 200 * len(sent)  # the reply once, plus a little per update
    assert all(m["method"] == "custom" for m in sent[:-1])  # no whole-state sync while live
    assert sent[-1]["method"] == "update" and set(sent[-1]["state"]) == {"messages", "visibility", "streaming"}
    (state,) = node_apply([{"kind": "transcript", "state": initial, "messages": sent[:-1]}])  # the deltas alone
    assert state["messages"] == initial["messages"] and text.startswith(state["streaming"]["content"][0]["text"])
    (state,) = node_apply([{"kind": "transcript", "state": initial, "messages": sent}])
    assert state == {"messages": [to_pi_json(m) for m in final], "visibility": ["both", "both"], "streaming": None}
    assert w.messages == state["messages"] and w.streaming is None  # the kernel's traits: the same state


def test_in_jupyterlab_a_streamed_reply_is_sent_once(monkeypatch):
    monkeypatch.setenv("JPY_SESSION_NAME", "/work/notebook.ipynb")
    clock = [0.0]
    prompt = user("go")
    w = TranscriptWidget(clock=lambda: clock[0])
    initial = {"messages": [], "visibility": [], "streaming": None}
    sent = capture(w)
    w.update([prompt], streaming=None)
    text = ""
    for i in range(600):
        clock[0] += 0.01
        text += f" word{i:03d}"
        w.update(streaming=faux.message(text))
    reply = faux.message(text, usage=Usage(input=5, output=600, total_tokens=605))
    w.update([prompt, reply], streaming=None)  # message_end
    w.flush()
    w.finish()
    assert all(m["method"] == "custom" for m in sent)  # the model in the page holds the state: no whole sync
    finished = [op for m in custom(sent) for op in m["ops"] if op["op"] == "messages" and "first" in op]
    assert len(finished) == 1 and len(json.dumps(finished[0])) < 1000  # made from the streaming copy
    assert sum(len(json.dumps(m)) for m in sent) < 1.3 * len(text) + 200 * len(sent)
    (state,) = node_apply([{"kind": "transcript", "state": initial, "messages": sent}])
    assert state == {
        "messages": [to_pi_json(prompt), to_pi_json(reply)],
        "visibility": ["both", "both"],
        "streaming": None,
    }


def test_finished_messages_are_spliced_in_and_a_collapsed_retry_replaces_the_card():
    w = TranscriptWidget()
    initial = {"messages": [], "visibility": [], "streaming": None}
    sent = capture(w)
    first, failed = user("q"), faux.message("", stop_reason="error", error_message="503")
    w.update([first], streaming=None)
    w.flush()
    w.update([first, failed])
    w.flush()
    counted = failed.model_copy(update={"error_message": "503 (2×)"})
    w.update([first, counted], streaming=faux.message("retrying"))
    w.flush()
    ops = [op for m in custom(sent) for op in m["ops"] if op["op"] == "messages"]
    assert [(op["at"], op["len"], len(op["messages"])) for op in ops] == [(0, 0, 1), (1, 1, 1), (1, 2, 1)]
    (state,) = node_apply([{"kind": "transcript", "state": initial, "messages": sent}])
    assert state["messages"] == w.messages and state["streaming"] == w.streaming
    assert state["messages"][1]["errorMessage"] == "503 (2×)"


def test_the_front_end_asking_again_gets_the_whole_state_and_its_copies_are_ignored():
    w = TranscriptWidget([user("a")])
    sent = capture(w)
    w._handle_custom_msg({"pi": "resync"}, [])
    (state,) = custom(sent)
    assert state == {"pi": "state", "messages": w.messages, "status": "", "streaming": None, "visibility": ["both"]}
    w.set_state({"messages": [], "show_hidden": True})  # a front end saving show_hidden sends its copies along
    assert w.messages != [] and w.show_hidden is True


def test_a_released_widget_is_gone_from_the_kernel_and_still_displays():
    w = TranscriptWidget([user("shown for good")])
    model_id = w.model_id
    layout_id = w.layout.model_id
    closes: list[Any] = []
    w.comm.publish_msg = lambda kind, **kwargs: closes.append(kind)
    before = w._repr_mimebundle_()[0]
    w.release()
    assert closes == []  # no comm_close: the page keeps its model and views
    assert model_id not in _instances and layout_id not in _instances and w.comm is None
    data, _ = w._repr_mimebundle_()
    assert data == before  # same model id, same fallbacks
    ref = weakref.ref(w)
    del w, data, before
    gc.collect()
    assert ref() is None  # nothing in the kernel keeps it


def test_finished_magics_keep_no_widget(shell):
    shell.cell("%bash echo warm")
    alive = len(_instances)
    for _ in range(5):
        shell.cell("%bash echo hi")
    assert len(_instances) == alive


def test_loading_the_extension_imports_no_widget_library():
    code = (
        "import sys, pi_notebook.notebook.extension, pi_notebook.notebook.magics\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('anywidget', 'ipywidgets')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    assert out.stdout.strip() == "[]"


# --- the inspector ----------------------------------------------------------------------------------------------


def history(n: int) -> list[Any]:
    """``n`` messages of a coding session: prompts, tool calls and results, shell commands, a hidden note."""
    out: list[Any] = []
    i = 0
    while len(out) < n:
        i += 1
        call = ToolCall(id=f"c{i}", name="read", arguments={"path": f"f{i}.py"})
        out += [
            user(f"turn {i}: read f{i}.py"),
            faux.message([f"reading {i}", call], usage=Usage(input=100 + i, output=5, total_tokens=105 + i)),
            ToolResultMessage(tool_call_id=f"c{i}", tool_name="read", content=[TextContent(text=f"content {i}")]),
            BashExecutionMessage(command=f"echo {i}", output=f"{i}\n", exit_code=0, exclude_from_context=i % 4 == 0),
            CustomMessage(custom_type="note", content=f"note {i}", display=i % 3 == 0),
        ]
    return out[:n]


def test_rows_of_a_long_history_traced_in_steps_are_those_of_one_trace():
    messages = history(LONG + STEP + 7)
    w = inspect(messages)
    assert w.rows == trace_boundary(messages).to_json()["rows"]
    assert w.total_tokens == trace_boundary(messages).total_tokens and w.busy is False


def test_an_append_traces_the_new_message_and_sends_only_it(monkeypatch):
    monkeypatch.setenv("JPY_SESSION_NAME", "/work/notebook.ipynb")  # a notebook open in JupyterLab
    messages = history(400)
    w = InspectorWidget(messages)
    sent = capture(w)
    initial = {"rows": list(w.rows), "requests": json.loads(json.dumps(w.requests))}
    traced: list[int] = []
    real = inspector_source.trace_boundary
    monkeypatch.setattr(inspector_source, "trace_boundary", lambda ms, *a: traced.append(len(ms)) or real(ms, *a))
    messages.append(BashExecutionMessage(command="ls", output="a\n", exit_code=0))
    w.refresh()
    assert traced == [1]  # the new message alone
    assert w.rows == trace_boundary(messages).to_json()["rows"]
    assert sum(len(json.dumps(m)) for m in sent) < 8_000  # a row and the request bodies' new message
    (state,) = node_apply([{"kind": "inspector", "state": initial, "messages": sent}])
    assert state["rows"] == w.rows and state["requests"] == w.requests
    messages[:] = messages[:10]  # not an append: traced again, in full
    traced.clear()
    w.refresh()
    assert traced == [10] and w.rows == trace_boundary(messages).to_json()["rows"]


def test_a_transform_that_returns_the_messages_unchanged_keeps_the_boundary_stepwise():
    from pi_notebook.agent import Agent

    calls = []

    def same(messages):
        calls.append(len(messages))
        return messages

    agent = Agent(faux.model(), messages=history(30), transform_context=same)
    w = inspect(agent)
    # The inspector ran it once, as the next call will: on the history and that call's prompt.
    assert calls == [31]
    assert w.rows == trace_boundary(agent.messages, same).to_json()["rows"]
    assert w._trace is not None and w._trace.stepwise


def test_headless_runs_get_whole_syncs_as_before():
    messages = history(50)
    w = InspectorWidget(messages)
    sent = capture(w)
    messages.append(user("one more"))
    w.refresh()
    assert [m["method"] for m in sent] == ["update"] and {"rows", "requests"} <= set(sent[0]["state"])


@pytest.fixture
def kernel_loop(monkeypatch):
    """A notebook open in JupyterLab, its kernel's event loop (run by the test): work left for after the cell."""
    monkeypatch.setenv("JPY_SESSION_NAME", "/work/notebook.ipynb")
    loop = asyncio.new_event_loop()
    monkeypatch.setattr(inspector_module, "_kernel_loop", lambda: loop)
    yield loop
    loop.close()


def settle(loop, widget) -> None:
    async def idle() -> None:
        while widget.busy:
            await asyncio.sleep(0.01)

    loop.run_until_complete(asyncio.wait_for(idle(), 60))


def test_in_a_kernel_a_long_history_shows_its_first_rows_at_once_and_the_rest_after_the_cell(kernel_loop):
    messages = history(LONG + 2 * STEP)
    expected = inspect(list(messages))  # computed at once, outside a kernel
    w = InspectorWidget(messages)
    sent = capture(w)
    initial = {"rows": list(w.rows), "requests": dict(w.requests)}
    assert len(w.rows) == STEP and w.requests == {} and w.busy is True
    settle(kernel_loop, w)
    assert w.rows == expected.rows and w.requests == expected.requests and w.provider == expected.provider
    assert w.total_tokens == expected.total_tokens
    assert {m["method"] for m in sent} == {"custom", "update"}  # deltas, and the header's small traits
    (state,) = node_apply([{"kind": "inspector", "state": initial, "messages": sent}])
    assert {k: state[k] for k in ("rows", "requests")} == {"rows": w.rows, "requests": w.requests}


def test_the_next_cell_finishes_the_work_first_and_the_display_fallbacks_follow(kernel_loop, monkeypatch):
    shown: list[tuple[str, dict[str, Any]]] = []
    monkeypatch.setattr(inspector_module, "display", lambda data, **kw: shown.append(("display", data, kw)))
    monkeypatch.setattr(inspector_module, "update_display", lambda data, **kw: shown.append(("update", data, kw)))
    messages = history(LONG + STEP)
    w = InspectorWidget(messages)
    assert callable(w._ipython_display_)  # busy: IPython calls it (a display with an id)
    w._ipython_display_()
    (kind, data, kw), *_ = shown
    assert kind == "display" and kw["display_id"] and f"{STEP} messages" in data["text/plain"]
    inspector_module._finish_unfinished()  # what the next cell's pre_run_cell does
    assert w.busy is False and len(w.rows) == len(messages) and w.requests
    kind, data, kw2 = shown[-1]
    assert kind == "update" and kw2["display_id"] == kw["display_id"]
    assert f"{len(messages):,} messages" in data["text/plain"] and data["text/html"].count("<tr>") == len(messages) + 1
    assert w._ipython_display_ is None  # done: displayed as any mimebundle


def test_a_page_that_keeps_the_saved_form_gets_no_display_update_of_the_whole_history(kernel_loop, monkeypatch):
    # JupyterLab with pi_notebook's extension writes the live state into the output when the notebook is saved and
    # says so; sending megabytes of the same history again as a display update would only slow its next cells.
    shown: list[tuple[str, dict[str, Any]]] = []
    monkeypatch.setattr(inspector_module, "display", lambda data, **kw: shown.append(("display", data, kw)))
    monkeypatch.setattr(inspector_module, "update_display", lambda data, **kw: shown.append(("update", data, kw)))
    w = InspectorWidget(history(LONG + STEP))
    w._ipython_display_()
    assert "still loading" in shown[0][1]["text/plain"]
    w._on_front_end_message(w, {"pi": "page_keeps_state"}, [])
    inspector_module._finish_unfinished()
    assert w.busy is False and len(w.rows) == LONG + STEP
    assert [kind for kind, *_ in shown] == ["display"]
    assert "still loading" not in repr(w)
