"""A lone surrogate (issue #21, failure 6): ``'\\udc00'`` in a prompt, or a Pi session file holding ``"\\ud800"``
(valid JSON, kept by Pi), is stored as written, and every view and export encodes it safely instead of raising:
the widgets' state and comm messages (which Jupyter sends as UTF-8 JSON: ``jupyter_client``'s own packer checks
them here), the saved outputs, ``show()``, ``inspect()`` and the three exports. The same through a real kernel:
``tests/reliability/test_lone_surrogates.py``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import ClassVar

import comm
import pytest
from IPython.utils.capture import capture_output
from jupyter_client.session import json_packer

import pi_notebook
from pi_notebook.ai import faux
from pi_notebook.coding_agent.session import SessionFile
from pi_notebook.notebook.export import export_jsonl, export_markdown
from pi_notebook.notebook.widgets import TranscriptWidget, json_patch
from tests.notebook.test_export import page_data

LONE = "\udc00"


class PackingComm(comm.base_comm.BaseComm):
    """A comm that serializes what it publishes as a Jupyter kernel does (``jupyter_client``'s packer: UTF-8 JSON),
    and keeps it. ``comm.create_comm`` is made to be replaced by the kernel's comm; this one is the test's."""

    published: ClassVar[list[dict]] = []

    def publish_msg(self, msg_type, data=None, metadata=None, buffers=None, **keys):
        content = {"data": {} if data is None else data, "comm_id": self.comm_id, **keys}
        json_packer(content)  # raises on what a kernel could not send
        PackingComm.published.append({"msg_type": msg_type, **json.loads(json_packer(content))})


@pytest.fixture
def packing_comms(monkeypatch):
    PackingComm.published = []
    monkeypatch.setattr(comm, "create_comm", PackingComm)
    return PackingComm.published


def sendable(bundle) -> dict:
    """A display bundle or widget state as the kernel sends it (raises what the kernel would raise)."""
    return json.loads(json_packer(bundle))


def test_a_lone_surrogate_in_a_prompt_is_kept_and_shown_and_exported_safely(shell, tmp_path, packing_comms):
    faux.set_responses([f"a reply with one too: {LONE}"])
    shell.ip.user_ns["x"] = LONE  # (as a cell would set it; the cells you run are recorded too: test_cells.py)
    with capture_output() as shown:
        result = shell.agent("hello {x} there")
    assert result.success, result.error_in_exec
    # the messages keep what was written; the session file too (as Pi keeps it)
    user, reply = shell.session.messages
    assert user.content[0].text == f"hello {LONE} there" and reply.content[0].text.endswith(LONE)
    with SessionFile.open(shell.session.file.path, readonly=True) as file:
        assert file.build_session_context().messages[0].content[0].text == f"hello {LONE} there"
    # the cell's display is sendable, the surrogate shown as U+FFFD
    outputs = [sendable(output.data) for output in shown.outputs]
    assert outputs and "hello \ufffd there" in outputs[-1]["text/plain"]
    saved = outputs[-1]["application/vnd.pi-notebook.transcript+json"]["messages"][0]
    assert json.loads(saved)["content"][0]["text"] == "hello \ufffd there"

    # show() and inspect(): their state (the comm's open), their displays
    transcript = pi_notebook.show(shell.session)
    assert sendable(transcript.get_state())["messages"][0]["content"][0]["text"] == "hello \ufffd there"
    assert "hello \ufffd there" in sendable(transcript._repr_mimebundle_()[0])["text/plain"]
    inspector = pi_notebook.inspect(shell.session)
    assert sendable(inspector.get_state())["rows"][0]["agent"]["content"][0]["text"] == "hello \ufffd there"
    sendable(inspector._repr_mimebundle_()[0])
    assert [m for m in packing_comms if m["msg_type"] == "comm_open"]  # the widgets' state went through the packer
    assert pi_notebook.current_session().messages[0].content[0].text == f"hello {LONE} there"  # still as written

    # the three exports
    for name in ("page.html", "page.md", "copy.jsonl"):
        assert shell.cell(f"%agent_session export {name}").success
    page = page_data(tmp_path / "page.html")["pi-export-state"]
    assert page["transcript"]["messages"][0]["content"][0]["text"] == f"hello {LONE} there"  # escaped exactly
    assert "hello \ufffd there" in (tmp_path / "page.md").read_text("utf-8")
    with SessionFile.open(tmp_path / "copy.jsonl", readonly=True) as copy:
        assert copy.build_session_context().messages[0].content[0].text == f"hello {LONE} there"


def pi_file(path: Path) -> Path:
    """A Pi session file holding lone surrogates (valid JSON: ``"\\ud800"``) in a prompt, a reply, a tool result,
    the working directory and the session's name."""
    usage = {"input": 10, "output": 5, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 15,
             "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}  # fmt: skip
    lines = [
        '{"type":"session","version":3,"id":"s-1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/home/u/p\\ud800"}',
        '{"type":"model_change","id":"e0","parentId":null,"timestamp":"2026-01-01T00:00:00.500Z",'
        '"provider":"anthropic","modelId":"claude-sonnet-4-5"}',
        '{"type":"message","id":"e1","parentId":"e0","timestamp":"2026-01-01T00:00:01.000Z",'
        '"message":{"role":"user","content":"hi \\ud800 there","timestamp":1}}',
        '{"type":"message","id":"e2","parentId":"e1","timestamp":"2026-01-01T00:00:02.000Z","message":'
        '{"role":"assistant","content":[{"type":"text","text":"ok \\udfff"},{"type":"toolCall","id":"c1",'
        '"name":"read","arguments":{"path":"a\\ud800.txt"}}],"api":"anthropic-messages","provider":"anthropic",'
        f'"model":"claude-sonnet-4-5","usage":{json.dumps(usage)},"stopReason":"toolUse","timestamp":2}}}}',
        '{"type":"message","id":"e3","parentId":"e2","timestamp":"2026-01-01T00:00:03.000Z","message":'
        '{"role":"toolResult","toolCallId":"c1","toolName":"read","content":[{"type":"text","text":"x\\udbff"}],'
        '"isError":false,"timestamp":3}}',
        '{"type":"session_info","id":"e4","parentId":"e3","timestamp":"2026-01-01T00:00:04.000Z","name":"n\\ud800"}',
    ]
    path.write_text("\n".join(lines) + "\n", "ascii")
    return path


def test_a_pi_file_holding_lone_surrogates_opens_shows_and_exports(shell, tmp_path, packing_comms, capsys):
    path = pi_file(tmp_path / "pi.jsonl")
    with SessionFile.open(path, readonly=True) as file:
        messages = file.build_session_context().messages
        assert messages[0].content == "hi \ud800 there"  # read as written
        transcript = pi_notebook.show(file)
        state = sendable(transcript.get_state())
        assert state["messages"][0]["content"] == "hi \ufffd there"
        assert state["messages"][1]["content"][1]["arguments"] == {"path": "a\ufffd.txt"}
        sendable(transcript._repr_mimebundle_()[0])
        inspector = pi_notebook.inspect(file)
        sendable(inspector.get_state())
        sendable(inspector._repr_mimebundle_()[0])
        page = pi_notebook.export_html(file, tmp_path / "page.html")
        text = page.read_text("utf-8")  # valid UTF-8
        assert "n\ufffd" in text and "/home/u/p\ufffd" in text  # the header: the name, the folder
        assert page_data(page)["pi-export-state"]["transcript"]["messages"][0]["content"] == "hi \ud800 there"
        assert "hi \ufffd there" in export_markdown(file, tmp_path / "page.md").read_text("utf-8")
        export_jsonl(file, tmp_path / "copy.jsonl")
    # opened in the notebook, shown and exported by the magics
    assert shell.cell(f"%agent_session open {path}").success
    with capture_output() as shown:
        assert shell.cell("import pi_notebook\ndisplay(pi_notebook.show(pi_notebook.current_session()))").success
    assert "hi \ufffd there" in sendable(shown.outputs[-1].data)["text/plain"]
    for name in ("again.html", "again.md", "again.jsonl"):
        assert shell.cell(f"%agent_session export {name}").success, name
    with SessionFile.open(tmp_path / "again.jsonl", readonly=True) as copy:
        assert copy.build_session_context().messages[0].content == "hi \ud800 there"


def test_live_updates_with_a_lone_surrogate_are_sent_and_keep_their_lengths(packing_comms):
    """The live transcript's deltas: a streaming reply that holds a lone surrogate, then an emoji (two UTF-16 code
    units, as the front end counts a string's length), grows by appends that fit what the front end holds."""
    widget = TranscriptWidget(min_interval=0)
    stream = {"role": "assistant", "content": [{"type": "text", "text": f"a{LONE}"}]}
    widget.set_streaming(stream)
    for more in ("b😀", "c", "d"):
        grown = json.loads(json.dumps(stream))
        grown["content"][0]["text"] += more
        widget.update(streaming=grown)
        widget.flush()
        stream = grown
    sent = [m["data"]["content"] for m in packing_comms if m["data"].get("method") == "custom"]
    appends = [op for m in sent for o in m["ops"] for op in o.get("patch", []) if op[0] == "a"]
    assert [(op[2], op[3]) for op in appends] == [("b😀", 2), ("c", 5), ("d", 6)]  # lengths as JavaScript counts
    assert json_patch("a😀", "a😀b") == [["a", [], "b", 3]]
