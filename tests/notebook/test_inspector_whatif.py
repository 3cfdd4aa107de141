"""InspectorWidget.what_if: a preview of a changed history that never touches the stored one."""

from __future__ import annotations

import json

import pytest

from pi_notebook.agent import BashExecutionMessage, CustomMessage, to_pi_json
from pi_notebook.ai import TextContent, UserMessage, faux
from pi_notebook.notebook.inspector import inspect

ANTHROPIC = "anthropic-messages (claude-sonnet-4-5)"

pytestmark = pytest.mark.usefixtures("fresh_faux")


def user(text):
    return UserMessage(content=[TextContent(text=text)])


def history():
    return [
        user("what is in the folder?"),
        faux.message("Let me look."),
        BashExecutionMessage(command="ls -la", output="SECRET_LISTING.txt\n", exit_code=0),
        CustomMessage(custom_type="ext", content="a note from an extension"),
        user("and now?"),
    ]


def sent_texts(body) -> str:
    return json.dumps(body)


def test_excluding_a_bash_row_takes_its_user_message_out_of_the_preview_only():
    messages = history()
    stored = [to_pi_json(m) for m in messages]
    w = inspect(messages)
    before_rows, before_requests = json.dumps(w.rows), json.dumps(w.requests)
    assert "SECRET_LISTING" in before_requests

    result = w.what_if({"exclude": [2]})

    row = result["rows"][2]
    assert (row["index"], row["status"], row["llm"], row["whatIf"]) == (2, "dropped", [], "exclude")
    assert row["agent"]["excludeFromContext"] is True
    assert set(result["requests"]) == set(w.requests)
    for body in result["requests"].values():
        assert "SECRET_LISTING" not in sent_texts(body) and "and now?" in sent_texts(body)
    assert result["total_tokens"] < w.total_tokens
    # nothing stored or shown changed: the messages, the widget's rows and bodies
    assert [to_pi_json(m) for m in messages] == stored and messages[2].exclude_from_context is None
    assert json.dumps(w.rows) == before_rows and json.dumps(w.requests) == before_requests


def test_including_an_excluded_bash_row_sends_it():
    messages = [
        user("hi"),
        BashExecutionMessage(command="env", output="HOME=/x", exit_code=0, exclude_from_context=True),
    ]
    w = inspect(messages)
    assert "HOME=/x" not in sent_texts(w.requests[ANTHROPIC])
    result = w.what_if({"include": [1]})
    assert result["rows"][1]["status"] == "translated" and "HOME=/x" in sent_texts(result["requests"][ANTHROPIC])


def test_dropping_a_row_keeps_a_dropped_row_in_its_place_and_the_others_indices():
    w = inspect(history())
    result = w.what_if({"drop": [0]})
    assert [r["index"] for r in result["rows"]] == [0, 1, 2, 3, 4]
    first = result["rows"][0]
    assert (first["status"], first["whatIf"], first["llm"]) == ("dropped", "drop", [])
    assert "what is in the folder?" not in sent_texts(result["requests"][ANTHROPIC])
    assert [r["status"] for r in result["rows"][1:]] == [r["status"] for r in w.rows[1:]]


def test_hiding_a_custom_message_changes_its_display_not_what_the_llm_gets():
    w = inspect(history())
    result = w.what_if({"hide": [3]})
    assert result["rows"][3]["agent"]["display"] is False and result["rows"][3]["whatIf"] == "hide"
    assert result["requests"] == w.requests  # Pi sends hidden custom messages all the same
    assert any("display is a UI setting" in note for note in result["notes"])


def test_misuse_is_an_exception_from_python_and_an_error_reply_to_the_page():
    w = inspect(history())
    with pytest.raises(ValueError, match="applies to bashExecution only"):
        w.what_if({"exclude": [0]})
    with pytest.raises(ValueError, match="not the index of a message"):
        w.what_if({"drop": [99]})
    with pytest.raises(ValueError, match="unknown change kind"):
        w.what_if({"explode": [1]})
    sent = []
    w.comm.send = lambda *args, **kwargs: sent.append(kwargs.get("data", args[0] if args else None))
    w._handle_custom_msg({"pi": "what_if", "id": 7, "changes": {"hide": [2]}}, [])
    w._handle_custom_msg({"pi": "what_if", "id": 8, "changes": {"exclude": [2]}}, [])
    replies = [m["content"] for m in sent if m.get("method") == "custom"]
    assert replies[0]["pi"] == "what_if_result" and replies[0]["id"] == 7 and replies[0]["ok"] is False
    assert "custom only" in replies[0]["error"]
    assert replies[1]["id"] == 8 and replies[1]["ok"] is True and replies[1]["rows"][2]["status"] == "dropped"
    json.dumps(replies[1])  # plain JSON, as a comm message must be


def test_secrets_are_redacted_in_the_preview(monkeypatch):
    secret = "sk-test-0123456789abcdef"
    monkeypatch.setenv("ANTHROPIC_API_KEY", secret)
    messages = [user(f"my key is {secret}"), BashExecutionMessage(command="echo", output=secret, exit_code=0)]
    w = inspect(messages)
    result = w.what_if({"include": [], "drop": [1]})
    # the request bodies as the real view cleans them (the rows show the stored messages, as the real view's do)
    assert secret not in json.dumps(result["requests"]) and "[redacted]" in sent_texts(result["requests"][ANTHROPIC])


def test_a_notebook_session_and_its_file_are_never_changed(shell):
    faux.set_responses(["hello back"])
    shell.agent("hi there")
    shell.cell("%bash echo SHELL_OUTPUT_42")
    session = shell.session
    w = inspect(session)
    path = session.file.path
    on_disk, stored = path.read_bytes(), [to_pi_json(m) for m in session.messages]
    bash = next(r["index"] for r in w.rows if r["role"] == "bashExecution")
    before = json.dumps(w.requests)

    result = w.what_if({"exclude": [bash], "drop": [0]})

    assert "SHELL_OUTPUT_42" in before
    assert all("SHELL_OUTPUT_42" not in sent_texts(body) for body in result["requests"].values())
    assert path.read_bytes() == on_disk and [to_pi_json(m) for m in session.messages] == stored
    assert [to_pi_json(m) for m in session.agent.state.messages] == stored
    assert json.dumps(w.requests) == before
