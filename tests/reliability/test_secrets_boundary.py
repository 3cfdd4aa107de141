"""A known secret is masked at one boundary that every message passes (#21, failures 1 and 2).

A secret put into a prompt with ``{var}`` or ``{os.environ}``, a reply that echoes it (as it streams and when it
ends), a provider's error text that holds it, a message recorded from Python, and a session file written before
(or by Pi) that holds one: none of them is stored, shown, sent or exported as written. The views mark such a
message "secrets masked" and the cell says once what was masked. ``mask_secrets=False`` sends it as written.

Real IPython shell, the faux provider (it receives the context itself, so what it got is what a provider would
be sent), real exports.
"""

from __future__ import annotations

import json
import os
import warnings

import pytest

import pi_notebook
import pi_notebook.notebook.export
from pi_notebook.ai import faux
from pi_notebook.coding_agent import CustomMessage
from pi_notebook.coding_agent.masking import SecretsMaskedWarning
from pi_notebook.coding_agent.session import SessionFile
from tests.notebook.conftest import shell as shell  # the real IPython shell fixture (re-exported)

TOKEN = "ghp_" + "Qm7Vx2Lc" + "Rt9Bn4Ws"
MARK = "[masked: GH_TOKEN]"


@pytest.fixture(autouse=True)
def a_token(monkeypatch):
    for name in [n for n in os.environ if "TOKEN" in n or "API_KEY" in n or "SECRET" in n]:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GH_TOKEN", TOKEN)


def everything(shell, *, session_file: bool = True) -> str:
    """Every artefact a user can keep: the session file, the live history, the widget states, what the model
    was sent, the inspector's request bodies, the three exports (``session_file=False``: not the file itself,
    for a file written before masking that is opened as it is)."""
    session = shell.session
    folder = shell.notebook.parent
    shell.cell(f"%agent_session export {folder / 'out.html'}")
    shell.cell(f"%agent_session export {folder / 'out.md'}")
    shell.cell(f"%agent_session export {folder / 'out.jsonl'}")
    inspector = pi_notebook.inspect(session)
    parts = [
        session.file.path.read_text(encoding="utf-8") if session_file else "",
        json.dumps([m.to_pi_json() for m in session.messages]),
        json.dumps(pi_notebook.show(session).get_state(), default=str),
        json.dumps(inspector.get_state(), default=str),
        json.dumps([c.to_pi_json() for c in faux.calls]),
        *((folder / f"out.{ext}").read_text(encoding="utf-8") for ext in ("html", "md", "jsonl")),
    ]
    inspector.close()
    return "\n".join(parts)


def test_a_secret_put_into_a_prompt_is_masked_before_anything_sees_it(shell, capsys):
    faux.set_responses(["Noted."])
    shell.ip.user_ns["token"] = os.environ["GH_TOKEN"]
    result = shell.agent("Use {token} for the API.")
    assert result.error_in_exec is None
    prompt = shell.session.messages[-2]
    assert prompt.content[0].text == f"Use {MARK} for the API."
    assert faux.calls[-1].messages[-1].content[0].text == f"Use {MARK} for the API."
    out = capsys.readouterr().out
    assert "masked GH_TOKEN in the prompt" in out and "mask_secrets=False" in out  # one line, once
    assert out.count("masked GH_TOKEN") == 1
    assert TOKEN not in everything(shell)


def test_the_whole_environment_in_a_prompt_is_masked(shell):
    faux.set_responses(["ok"])
    shell.ip.user_ns["os"] = os
    shell.agent("{os.environ}")
    text = shell.session.messages[-2].content[0].text
    assert MARK in text and TOKEN not in text


def test_a_reply_that_echoes_a_secret_is_masked_as_it_streams_and_when_it_ends(shell, capsys):
    shown = []
    faux.set_responses([f"Your token is {TOKEN}, keep it safe."])
    session = shell.session
    unsubscribe = session.agent.subscribe(
        lambda e: shown.append(json.dumps(e.message.to_pi_json())) if e.type == "message_update" else None
    )
    shell.agent("What is my token?")
    unsubscribe()
    reply = session.messages[-1]
    assert reply.content[0].text == f"Your token is {MARK}, keep it safe."
    assert shown and not any(TOKEN in s for s in shown)  # no partial reply showed it either
    assert not any(TOKEN[:12] in s for s in shown)  # nor the start of it, while the rest was on its way
    assert "masked GH_TOKEN in a reply" in capsys.readouterr().out
    assert TOKEN not in everything(shell)


def test_a_provider_error_that_holds_a_secret_is_masked(shell):
    faux.set_responses([faux.message([], stop_reason="error", error_message=f"401: bad token {TOKEN}")])
    shell.agent("hi")
    error = shell.session.messages[-1]
    assert error.stop_reason == "error" and error.error_message == f"401: bad token {MARK}"
    assert TOKEN not in everything(shell)


def test_record_masks_and_warns_in_one_line(shell):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pi_notebook.record(CustomMessage(custom_type="note", content=f"token={TOKEN}", display=True))
    assert shell.session.messages[-1].content == f"token={MARK}"
    [warning] = [w for w in caught if issubclass(w.category, SecretsMaskedWarning)]
    assert "masked GH_TOKEN in the recorded message" in str(warning.message)
    assert TOKEN not in everything(shell)


def test_a_session_file_that_holds_a_secret_is_masked_when_loaded(shell, tmp_path):
    path = tmp_path / "old.jsonl"
    with SessionFile.create(path, cwd=str(tmp_path)) as old:  # written before masking (or by Pi, which has none)
        old.append_message(faux.message(f"the token is {TOKEN}"))
    shell.cell(f"%agent_session open {path}")
    assert shell.session.messages[-1].content[0].text == f"the token is {MARK}"
    faux.set_responses(["ok"])
    shell.agent("and now?")
    assert TOKEN not in json.dumps([c.to_pi_json() for c in faux.calls])  # never sent
    assert TOKEN in path.read_text(encoding="utf-8")  # the file stays as it was written


def test_masking_off_sends_the_secret_as_written(shell):
    shell.cell("%agent_config mask_secrets=false")
    faux.set_responses(["ok"])
    shell.ip.user_ns["token"] = TOKEN
    shell.agent("Use {token}.")
    assert faux.calls[-1].messages[-1].content[0].text == f"Use {TOKEN}."


def test_the_views_mark_a_masked_prompt(shell):
    faux.set_responses(["ok"])
    shell.ip.user_ns["token"] = TOKEN
    shell.agent("Use {token}.")
    html = pi_notebook.show(shell.session)._repr_mimebundle_()[0]["text/html"]
    assert MARK in html and TOKEN not in html


def test_every_export_of_a_file_that_holds_a_secret_masks_it(shell, tmp_path):
    path = tmp_path / "old.jsonl"
    with SessionFile.create(path, cwd=str(tmp_path)) as old:  # written before masking (or by Pi, which has none)
        old.append_message(faux.message(f"the token is {TOKEN}"))
        old.append_custom_message_entry("note", f"token={TOKEN}", display=True, details={"raw": TOKEN})
    source = SessionFile.open(path, readonly=True)
    try:
        for ext in ("html", "md", "jsonl"):
            written = pi_notebook.notebook.export.export_session(source, tmp_path / f"copy.{ext}")
            text = written.read_text(encoding="utf-8")
            assert TOKEN not in text and "GH_TOKEN" in text, ext
        shell.cell(f"%agent_session open {path}")  # and from the session it is opened as
        assert TOKEN not in everything(shell, session_file=False)
    finally:
        source.close()
