"""Approval in real kernels (#23): where no page can answer, a call that needs approval ends in one clear refusal
within a second, and nothing runs; where a front end answers over the prompt's widget comm (as JupyterLab does),
the running cell hears it; the stop button while the prompt waits stops the run.

Each test starts a real ``ipykernel`` with ``jupyter_client`` (or runs a notebook with ``nbclient``), loads the
extension as a notebook does and scripts the model with the faux provider. The front end of the second group is
this test speaking Jupyter's protocol over the kernel's channels (a ``comm_msg`` per click), as a page would; the
browser itself is tested in ``tests/e2e/test_lab_approval.py``.
"""

from __future__ import annotations

import json
import os
import queue
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import nbformat
import pytest
from jupyter_client.manager import start_new_kernel
from nbclient import NotebookClient

from pi_notebook.ai import faux

SETUP = (
    "%load_ext pi_notebook\nimport json, time, pi_notebook\nfrom pi_notebook.ai import faux\n"
    "pi_notebook.current_session().config.cells = 'off'"
)  # cells=off: these cells script the model; they are not what the tests are about
SCRIPT = 'faux.set_responses([[faux.tool_call("bash", {"command": "echo ran > proof.txt"})], "Done."])'
TIMING = """stamps = {}
def _stamp(event):
    if event.type == "tool_execution_start":
        stamps["asked"] = time.monotonic()
    elif event.type == "message_end" and event.message.role == "toolResult":
        stamps["answered"] = time.monotonic()
pi_notebook.current_session().agent.subscribe(_stamp)"""
AGENT = "%%agent --model faux/faux-1 --tools bash\nRun it."
RESULTS = (
    "print(json.dumps([m.to_pi_json() for m in pi_notebook.current_session().messages if m.role == 'toolResult']))"
)
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


@dataclass
class Cell:
    """What one execute request produced."""

    outputs: list[tuple[str, dict[str, Any]]] = field(default_factory=list)  # (msg_type, content)
    prompts: list[dict[str, Any]] = field(default_factory=list)  # the approval widgets opened (their state)

    @property
    def text(self) -> str:
        parts = []
        for kind, body in self.outputs:
            if kind == "stream":
                parts.append(body["text"])
            elif kind in ("display_data", "update_display_data", "execute_result"):
                parts.append(body["data"].get("text/plain", ""))
            elif kind == "error":
                parts.append(f"{body['ename']}: {body['evalue']}")
        return "\n".join(parts)


class Kernel:
    """A real kernel driven as a front end drives it; ``page`` answers approval prompts the way a page would."""

    def __init__(self, folder: Path):
        env = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_TOKEN"))}
        env["JPY_SESSION_NAME"] = str(folder / "work.ipynb")
        self.folder = folder
        self.km, self.kc = start_new_kernel(kernel_name="python3", cwd=str(folder), env=env, startup_timeout=120)

    def say(self, comm_id: str, content: dict[str, Any]) -> None:
        """What a page sends when the prompt is drawn or a button clicked."""
        data = {"method": "custom", "content": content}
        self.kc.shell_channel.send(self.kc.session.msg("comm_msg", {"comm_id": comm_id, "data": data}))

    def run(self, code: str, page: Any = None, timeout: float = 120) -> Cell:
        msg = self.kc.session.msg("execute_request", {"code": code, "silent": False, "store_history": True,
                                                      "user_expressions": {}, "allow_stdin": False})  # fmt: skip
        self.kc.shell_channel.send(msg)
        cell, deadline, opened = Cell(), time.monotonic() + timeout, set()
        while True:
            try:
                message = self.kc.get_iopub_msg(timeout=max(0.1, deadline - time.monotonic()))
            except queue.Empty:
                raise TimeoutError(f"{code!r} did not end in {timeout} s: {cell.text[-500:]}") from None
            if message["parent_header"].get("msg_id") != msg["header"]["msg_id"]:
                continue
            kind, body = message["msg_type"], message["content"]
            if kind == "comm_open" and "request" in body["data"].get("state", {}):
                cell.prompts.append(body["data"]["state"])
                opened.add(body["comm_id"])
            elif kind == "status" and body["execution_state"] == "idle":
                return cell
            elif kind != "status":
                cell.outputs.append((kind, body))
                view = body.get("data", {}).get(WIDGET_VIEW, {}) if kind == "display_data" else {}
                if page is not None and view.get("model_id") in opened:
                    page(self, view["model_id"])  # a page draws the prompt when its display arrives

    def results(self) -> list[dict[str, Any]]:
        return json.loads(self.run(RESULTS).text.strip().splitlines()[-1])

    def seconds_to_answer(self) -> float:
        return float(self.run("print(stamps['answered'] - stamps['asked'])").text.strip())

    def shutdown(self) -> None:
        try:
            self.kc.stop_channels()
        finally:
            self.km.shutdown_kernel(now=True)


@pytest.fixture
def kernel(tmp_path) -> Iterator[Kernel]:
    started = Kernel(tmp_path)
    try:
        started.run(SETUP)
        started.run(TIMING)
        yield started
    finally:
        started.shutdown()


def test_with_no_page_a_call_that_needs_approval_is_refused_within_a_second_and_nothing_runs(kernel):
    # A first tool call of the kernel, which needs no approval: the loop's first check of a call's arguments
    # imports jsonschema (about a second, with or without approval), not part of what is measured.
    kernel.run("%agent_config approve=none")
    kernel.run('faux.set_responses([[faux.tool_call("bash", {"command": "true"})], "Warm."])')
    kernel.run(AGENT)
    assert "approve               %agent_config  'bash'" in kernel.run("%agent_config approve=bash").text
    kernel.run(SCRIPT)
    cell = kernel.run(AGENT)
    seconds = kernel.seconds_to_answer()
    assert seconds < 1.0, f"the refusal took {seconds:.2f} s"
    assert not (kernel.folder / "proof.txt").exists()
    result = kernel.results()[-1]
    assert result["isError"] and result["content"][0]["text"].startswith(
        "This bash call needs approval, and nothing here can approve it (no page showed the approval prompt within "
        "0.8 s: a run without a page (nbclient, nbval, jupyter execute) or a front end that does not draw widgets): "
        "it did not run. Open the notebook in JupyterLab"
    )
    assert "%agent_config approve=none" in result["content"][0]["text"]
    assert result["details"]["approval"]["decision"] == "unanswered"
    # the cell: the prompt, then its refusal as text in its place, and the run's saved form with one line about it
    assert "✗ refused: bash `echo ran > proof.txt` needs approval" in cell.text
    assert "pi_notebook: bash `echo ran > proof.txt` did not run: it needs approval" in cell.text
    assert all(WIDGET_VIEW not in body.get("data", {}) for kind, body in cell.outputs if kind == "update_display_data")
    print(f"\nrefused {seconds:.3f} s after the call")


def test_a_page_that_answers_is_heard_while_the_cell_runs(kernel):
    kernel.run("%agent_config approve=bash")

    def approve(k: Kernel, comm_id: str) -> None:
        k.say(comm_id, {"pi": "ping"})
        k.say(comm_id, {"pi": "decide", "verdict": "approve", "reason": ""})

    kernel.run(SCRIPT)
    cell = kernel.run(AGENT, page=approve)
    [prompt] = cell.prompts
    assert prompt["request"]["text"] == "echo ran > proof.txt" and prompt["request"]["kind"] == "command"
    assert (kernel.folder / "proof.txt").read_text() == "ran\n"
    assert "✓ approved: bash `echo ran > proof.txt`" in cell.text
    assert "pi_notebook: you approved bash `echo ran > proof.txt`" in cell.text

    def deny(k: Kernel, comm_id: str) -> None:
        k.say(comm_id, {"pi": "ping"})
        time.sleep(1.5)  # the user reads: a page that drew the prompt is waited for
        k.say(comm_id, {"pi": "decide", "verdict": "deny", "reason": "not twice"})

    (kernel.folder / "proof.txt").unlink()
    kernel.run(SCRIPT)
    cell = kernel.run(AGENT, page=deny)
    assert not (kernel.folder / "proof.txt").exists()
    assert "✗ denied: bash `echo ran > proof.txt` (not twice)" in cell.text
    last = kernel.results()[-1]
    assert last["content"][0]["text"] == "The user denied this call: it did not run. Their reason: not twice"
    assert kernel.run("print(faux.calls[-1].messages[-1].content[0].text)").text.strip() == (
        "The user denied this call: it did not run. Their reason: not twice"
    )  # what the model read next


def test_the_stop_button_while_the_prompt_waits_stops_the_run(kernel):
    kernel.run("%agent_config approve=bash")

    def stop(k: Kernel, comm_id: str) -> None:
        k.say(comm_id, {"pi": "ping"})
        time.sleep(0.5)
        k.km.interrupt_kernel()

    kernel.run(SCRIPT)
    cell = kernel.run(AGENT, page=stop, timeout=30)
    assert not (kernel.folder / "proof.txt").exists()
    assert "■ stopped while waiting for approval: bash `echo ran > proof.txt`" in cell.text
    assert "the run was aborted" in cell.text
    [result] = kernel.results()
    assert result["content"][0]["text"] == (
        "The user stopped the run while this call waited for approval: it did not run."
    )
    assert result["details"]["approval"]["decision"] == "stopped"


def test_nbclient_runs_the_notebook_to_its_end_and_saves_the_refusal_as_text(tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(c) for c in (SETUP, "%agent_config approve=bash", SCRIPT, AGENT)]
    nb.cells.append(nbformat.v4.new_code_cell("print('the notebook went on')"))
    started = time.monotonic()
    NotebookClient(nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    took = time.monotonic() - started
    assert not (tmp_path / "proof.txt").exists()
    agent = nb.cells[3].outputs
    texts = "\n".join(o.get("text", "") + o.get("data", {}).get("text/plain", "") for o in agent)
    assert "did not run: it needs approval, and nothing here can approve it (no page showed" in texts
    assert all(WIDGET_VIEW not in o.get("data", {}) for o in agent)  # no prompt with buttons is saved
    saved = json.dumps(nb.metadata.get("widgets", {}))
    assert "Always this session" not in saved and "echo ran" not in saved  # nor its state
    assert nb.cells[4].outputs[0]["text"] == "the notebook went on\n"
    assert took < 60


# --- a plain IPython shell (terminal IPython, a script): no kernel, no page ---------------------------------------


def test_agent_config_says_which_tools_ask_and_refuses_a_wrong_name(shell, capsys):
    shell.cell("%agent_config default_model=faux/faux-1")
    out = capsys.readouterr().out
    assert (
        "approve               default        'default'  → none (the default for faux/faux-1, a scripted model: "
        "you wrote its calls)" in out
    )
    shell.cell("%agent_config default_model=anthropic/claude-sonnet-4-5")
    assert (
        "approve               default        'default'  → python,bash,edit,write (the default for "
        "anthropic/claude-sonnet-4-5, a model that acts for real)"
    ) in capsys.readouterr().out
    result = shell.cell("%agent_config approve=bash,sed")
    assert str(result.error_in_exec).startswith("approve: unknown tool(s) sed; choose from read, bash")
    assert shell.session.config.approve == "default"


def test_without_a_kernel_a_call_that_needs_approval_is_refused_at_once(shell, tmp_path):
    shell.cell("%agent_config approve=bash")
    faux.set_responses([[faux.tool_call("bash", {"command": "echo ran > proof.txt"})], "Done."])
    started = time.monotonic()
    shell.agent("Run it.", "--model faux/faux-1 --tools bash")
    assert time.monotonic() - started < 1.0
    assert not (tmp_path / "proof.txt").exists()
    result = [m for m in shell.session.messages if m.role == "toolResult"][-1]
    assert result.content[0].text.startswith(
        "This bash call needs approval, and nothing here can approve it (this Python is no Jupyter kernel (a script "
        "or terminal IPython): no page can show the prompt): it did not run. Open the notebook in JupyterLab"
    )
