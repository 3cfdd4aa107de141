"""Through a real Jupyter kernel: record, restart the kernel, reload the extension, and the history is back;
re-running a cell (same cell id, as JupyterLab sends it) forks the conversation."""

import json
import os
import queue

import pytest
from jupyter_client.manager import start_new_kernel

SETUP = "%load_ext pi_notebook\n%agent_config cells=off\nfrom pi_notebook.ai import faux"  # (the cells scripting the
# faux model are the test's own: not part of the conversation these tests check; test_cells.py checks cells)
ROLES = "import pi_notebook, json\nprint(json.dumps([m.role for m in pi_notebook.current_session().messages]))"


class Kernel:
    def __init__(self, km, kc):
        self.km, self.kc = km, kc

    def run(self, code: str, cell_id: str | None = None, timeout: float = 60) -> str:
        """Execute like a front end does (with the cell id in the request metadata); return the text output."""
        content = {"code": code, "silent": False, "store_history": True, "user_expressions": {},
                   "allow_stdin": False, "stop_on_error": True}  # fmt: skip
        msg = self.kc.session.msg("execute_request", content, metadata={"cellId": cell_id} if cell_id else {})
        self.kc.shell_channel.send(msg)
        out = []
        while True:
            try:
                reply = self.kc.get_iopub_msg(timeout=timeout)
            except queue.Empty:
                raise TimeoutError(f"no reply to {code!r}") from None
            if reply["parent_header"].get("msg_id") != msg["header"]["msg_id"]:
                continue
            kind, body = reply["msg_type"], reply["content"]
            if kind == "stream":
                out.append(body["text"])
            elif kind in ("display_data", "execute_result", "update_display_data"):
                out.append(body["data"].get("text/plain", ""))
            elif kind == "error":
                raise AssertionError(f"{body['ename']}: {body['evalue']}")
            elif kind == "status" and body["execution_state"] == "idle":
                return "".join(out)

    def roles(self) -> list[str]:
        return json.loads(self.run(ROLES).strip().splitlines()[-1])

    def restart(self) -> None:
        self.km.restart_kernel(now=True)
        self.kc.wait_for_ready(timeout=60)


@pytest.fixture
def kernel(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["JPY_SESSION_NAME"] = str(tmp_path / "work.ipynb")  # how Jupyter tells a kernel its notebook
    km, kc = start_new_kernel(kernel_name="python3", cwd=str(tmp_path), env=env)
    yield Kernel(km, kc)
    kc.stop_channels()
    km.shutdown_kernel(now=True)


def test_history_survives_a_kernel_restart(kernel, tmp_path):
    kernel.run(SETUP)
    kernel.run("%bash echo recorded before the restart", cell_id="c1")
    kernel.run("%bash! echo private", cell_id="c2")
    kernel.run('faux.set_responses(["Noted."])\n')
    out = kernel.run("%%agent --model faux/faux-1 --tools none\nRemember: the answer is 42.", cell_id="c3")
    assert "Noted." in out
    before = kernel.roles()
    assert before == ["bashExecution", "bashExecution", "user", "assistant"]
    assert (tmp_path / ".pi_sessions" / "work.jsonl").is_file()

    kernel.restart()
    kernel.run(SETUP)
    assert kernel.roles() == before
    kernel.run('faux.set_responses(["Still 42."])\n')
    kernel.run("%%agent --model faux/faux-1 --tools none\nWhat was the answer?", cell_id="c4")
    seen = kernel.run("print([m.role for m in faux.calls[-1].messages])")
    assert seen.strip() == "['user', 'user', 'assistant', 'user']"  # the excluded command was never sent


def test_rerunning_a_cell_after_a_restart_forks_the_conversation(kernel):
    kernel.run(SETUP)
    kernel.run('faux.set_responses(["Paris.", "Big."])\n')
    kernel.run("%%agent --model faux/faux-1 --tools none\nCapital of France?", cell_id="cell-a")
    kernel.run("%%agent --model faux/faux-1 --tools none\nTell me more.", cell_id="cell-b")
    kernel.restart()
    kernel.run(SETUP)
    kernel.run('faux.set_responses(["Still Paris."])\n')
    kernel.run("%%agent --model faux/faux-1 --tools none\nCapital of France?", cell_id="cell-a")
    assert kernel.roles() == ["branchSummary", "user", "assistant"]
    summary = kernel.run("print(pi_notebook.current_session().messages[0].summary)")
    assert "Tell me more." in summary
