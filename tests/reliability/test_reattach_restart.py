"""After ``%agent_session open N`` or ``open PATH``, a real kernel restart comes back to that session.

``tests/notebook/test_reattach.py`` restarts by unloading and loading the extension in one process; here the
kernel is a real ``ipykernel`` restarted as Jupyter's "Restart Kernel" does (``KernelManager.restart_kernel``: a
new process, the same connection), then ``%load_ext pi_notebook`` runs again as the notebook's first cell would.
Pi's folder for the kernel's working directory is under ``PI_CODING_AGENT_DIR`` (a tmp dir), with two sessions
written as Pi writes them; ``open 2`` is the older one (``/resume``'s order: newest activity first).
"""

from __future__ import annotations

import os

import pytest

from pi_notebook.ai.types import AssistantMessage, TextContent, UserMessage
from pi_notebook.coding_agent.pi_sessions import pi_session_dir, pi_session_file_name
from pi_notebook.coding_agent.session import SessionFile
from tests.reliability.test_real_kernel import SETUP, Kernel, _texts


def restart(kernel: Kernel) -> int:
    """Restart the kernel as Jupyter does; the new process's id."""
    before = kernel.pid
    kernel.km.restart_kernel()
    kernel.kc.wait_for_ready(timeout=120)
    assert kernel.pid != before  # a new process, not the same one
    return kernel.pid


def pi_session(path, cwd, word: str, at: int) -> list[str]:
    """A Pi session at ``path`` with one exchange about ``word`` at time ``at`` (ms); its texts."""
    texts = [f"the {word} question", f"the {word} answer"]
    with SessionFile.create(path, cwd=cwd) as file:
        file.append_message(UserMessage(content=texts[0], timestamp=at))
        reply = [TextContent(text=texts[1])]
        file.append_message(AssistantMessage(content=reply, api="faux", provider="faux", model="faux-1", timestamp=at))
    return texts


@pytest.mark.parametrize("how", ["number", "path"])
def test_a_session_opened_by_number_or_path_is_reattached_after_a_real_kernel_restart(
    how, kernels, tmp_path, monkeypatch
):
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    cwd = os.path.realpath(tmp_path)  # the kernel's os.getcwd()
    folder = pi_session_dir(cwd)
    folder.mkdir(parents=True)
    older = folder / pi_session_file_name("2026-01-01T10:00:00.000Z")
    older_texts = pi_session(older, cwd, "older", 1_767_261_600_000)
    pi_session(folder / pi_session_file_name("2026-01-02T10:00:00.000Z"), cwd, "newer", 1_767_348_000_000)
    elsewhere = tmp_path / "elsewhere" / "kept.jsonl"
    elsewhere_texts = pi_session(elsewhere, cwd, "kept", 1_767_261_600_000)
    target, texts = (older, older_texts) if how == "number" else (elsewhere, elsewhere_texts)

    kernel = kernels()
    kernel.run(SETUP)
    kernel.run("%bash echo in-the-notebook-session", cell_id="c1")
    shown = kernel.run("%agent_session open 2" if how == "number" else f"%agent_session open {target}", "c2")
    assert f"session file: {target}" in shown
    kernel.run("%bash echo after-open", cell_id="c3")

    restart(kernel)
    loaded = kernel.run(SETUP)
    assert loaded.strip() == "", loaded  # nothing to say: the pointer leads to a good session
    assert kernel.run("%agent_session").splitlines()[0] == f"session file: {target}"
    messages = kernel.messages()
    assert _texts(messages) == [*texts, "after-open\n"]
    assert messages[-1]["command"] == "echo after-open"
    if how == "number":  # and Pi's listing marks it as the notebook's current session, still number 2
        listing = kernel.run("%agent_session open").splitlines()
        assert [line.split()[:2] for line in listing if line.startswith("*")] == [["*", "2"]], listing
    # the session recorded before the switch is untouched, and is where a notebook without a pointer goes
    default = SessionFile.open(tmp_path / ".pi_sessions" / "work.jsonl", readonly=True)
    assert [m.command for m in default.build_session_context().messages] == ["echo in-the-notebook-session"]
