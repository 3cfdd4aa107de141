"""A lone surrogate in a prompt on a real Jupyter kernel (issue #21, failure 6): the live view's updates, the
cell's final display, ``show()``, ``inspect()`` and the three exports go out as UTF-8 (the surrogate shown as
U+FFFD) instead of failing with ``UnicodeEncodeError``; the stored message keeps what was written. The same in a
plain IPython shell, and a Pi file holding ``"\\ud800"``: ``tests/notebook/test_lone_surrogates.py``."""

from __future__ import annotations

import json

from tests.notebook.test_lone_surrogates import pi_file
from tests.reliability.test_real_kernel import SETUP, kernels  # noqa: F401 (the fixture)


def test_a_lone_surrogate_in_a_prompt_on_a_real_kernel(kernels, tmp_path):  # noqa: F811
    kernel = kernels()
    kernel.run(SETUP)
    # '\udc00' written as code, as a user does: the cell's text itself is plain ASCII
    kernel.run("x = chr(0xdc00)\nfaux.set_responses([f'a reply that streams one too: {x}.'])")
    reply = kernel.watch(kernel.send("%%agent --model faux/faux-1 --tools none\nhello {x} there"))
    assert reply.errors == [], reply.errors[0]["evalue"] if reply.errors else ""
    assert reply.comm, "the live view was updated"
    assert any("\\ufffd" in update or "\ufffd" in update for update in reply.comm)
    assert "one too: \ufffd." in reply.output  # the final display (its summary: the last message)
    user, answer = kernel.messages()  # as written, in the session
    assert user["content"][0]["text"] == "hello \udc00 there" and "\udc00" in answer["content"][0]["text"]

    shown = kernel.run(
        "s = pi_notebook.current_session()\ndisplay(pi_notebook.show(s))\ndisplay(pi_notebook.inspect(s))"
    )
    assert "[user]\nhello \ufffd there" in shown and "<InspectorWidget: 2 messages" in shown
    for name in ("page.html", "page.md", "copy.jsonl"):
        assert f"to {name}" in kernel.run(f"%agent_session export {name}")
    assert "hello \ufffd there" in (tmp_path / "page.md").read_text("utf-8")
    page = (tmp_path / "page.html").read_text("utf-8")
    assert "hello \\udc00 there" in page  # in the page's JSON, escaped exactly
    copy = [json.loads(line) for line in (tmp_path / "copy.jsonl").read_text("utf-8").splitlines()]
    first = next(entry["message"] for entry in copy if entry["type"] == "message")
    assert first["content"][0]["text"] == "hello \udc00 there"


def test_a_pi_file_holding_lone_surrogates_on_a_real_kernel(kernels, tmp_path):  # noqa: F811
    path = pi_file(tmp_path / "pi.jsonl")
    kernel = kernels()
    kernel.run(SETUP)
    opened = kernel.run(f"%agent_session open {path}")
    assert "name: n\ufffd" in opened
    shown = kernel.run(
        "s = pi_notebook.current_session()\ndisplay(pi_notebook.show(s))\ndisplay(pi_notebook.inspect(s))"
    )
    assert "hi \ufffd there" in shown and "<InspectorWidget: 3 messages" in shown
    for name in ("page.html", "page.md", "copy.jsonl"):
        assert f"to {name}" in kernel.run(f"%agent_session export {name}")
    assert kernel.messages()[0]["content"] == "hi \ud800 there"  # as written
