"""``AgentSession`` without a notebook: a plain script opens a session in a folder, runs a shell command and a
prompt, reads the messages and continues later; the next request's preview is what a run then sends."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from pi_notebook.ai import faux
from pi_notebook.coding_agent import AgentSession, CustomMessage, SessionSettings
from pi_notebook.coding_agent.session_events import CompactionEvent

ROOT = Path(__file__).resolve().parents[2]
FRONT_END_MODULES = ("IPython", "ipykernel", "ipywidgets", "anywidget", "comm", "traitlets")


def readme_block(heading: str) -> str:
    """The first Python example after ``heading`` in the README."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    after = text[text.index(heading) :]
    return re.search(r"```python\n(.*?)```", after, re.DOTALL).group(1)


def test_the_readme_script_runs_without_ipython_or_widgets(tmp_path):
    pytest.importorskip("llama_cpp")  # the script uses the offline default model
    check = (
        "\nimport sys, json\n"
        f"loaded = sorted(m for m in sys.modules if m.split('.')[0] in {FRONT_END_MODULES!r})\n"
        "print(json.dumps({'roles': [m.role for m in session.messages], 'loaded': loaded,"
        " 'last': next_request['messages'][-1]}))\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["OLLAMA_HOST"] = "127.0.0.1:9"  # nothing answers there: the default is the offline model
    env["PYTHONPATH"] = str(ROOT)
    done = subprocess.run(
        [sys.executable, "-c", readme_block("### A session without a notebook") + check],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["loaded"] == []  # IPython was never imported, nor any widget library
    assert report["roles"] == ["bashExecution", "user", "assistant", "toolResult", "assistant"]
    assert report["last"]["content"].startswith("Ran `echo 'pears: 5, apples: 3' > fruit.txt`")
    [file] = (tmp_path / "sessions").glob("*.jsonl")
    again = AgentSession.open(tmp_path / "sessions", cwd=str(tmp_path))  # the folder's newest session: that one
    try:
        assert again.file.path == file and [m.role for m in again.messages] == report["roles"]
    finally:
        again.close()


@pytest.fixture
def session(tmp_path, fresh_faux):
    opened = AgentSession.open(tmp_path / "sessions", SessionSettings(default_model="faux/faux-1"), cwd=str(tmp_path))
    yield opened
    opened.close()


def test_a_shell_command_and_a_prompt_are_recorded_and_continue_in_a_new_process(session, tmp_path):
    faux.set_responses(["It printed hello."])
    asyncio.run(session.bash("echo hello"))
    new = asyncio.run(session.prompt("What did it print?", tools=[]))
    assert [m.role for m in new] == ["user", "assistant"]
    assert [m.role for m in session.messages] == ["bashExecution", "user", "assistant"]
    sent = faux.calls[-1].messages
    assert sent[0].content[0].text.startswith("Ran `echo hello`") and "hello" in sent[0].content[0].text
    session.close()
    reopened = AgentSession.open(session.file.path, cwd=str(tmp_path))
    try:
        assert [m.role for m in reopened.messages] == ["bashExecution", "user", "assistant"]
        assert reopened.messages[-1].content[0].text == "It printed hello."
    finally:
        reopened.close()


def test_an_excluded_command_is_stored_and_shown_but_never_sent(session):
    faux.set_responses(["ok"])
    asyncio.run(session.bash("echo private", exclude=True))
    asyncio.run(session.prompt("hi", tools=[]))
    assert session.messages[0].exclude_from_context is True
    assert "private" not in json.dumps([m.to_pi_json() for m in faux.calls[-1].messages])
    assert "private" not in json.dumps(session.preview().request())


def test_the_preview_of_a_prompt_is_what_the_run_then_sends(session):
    faux.set_responses(["first"])
    asyncio.run(session.prompt("one", tools=["read", "ls"], system_prompt="Be brief."))
    preview = session.preview("two")
    assert preview.plan.tool_names == ("read", "ls") and preview.plan.system_prompt == "Be brief."
    faux.set_responses(["second"])
    asyncio.run(session.prompt("two", tools=["read", "ls"], system_prompt="Be brief."))

    def untimed(context):  # the faux provider receives the context itself, with each message's timestamp
        return {**context, "messages": [{k: v for k, v in m.items() if k != "timestamp"} for m in context["messages"]]}

    assert untimed(preview.request()) == untimed(faux.calls[-1].to_pi_json())
    # Without a prompt: the same request, minus the prompt (the preview runs no model and writes nothing).
    entries = len(session.file.entries)
    assert session.preview().request()["messages"] == [m.to_pi_json() for m in session.messages]
    assert len(session.file.entries) == entries


def test_running_an_anchor_again_forks_with_a_summary_of_what_it_leaves(session):
    faux.set_responses(["A1", "B1", "A2"])
    asyncio.run(session.prompt("question A", tools=[], anchor="cell-a"))
    asyncio.run(session.prompt("question B", tools=[], anchor="cell-b"))
    asyncio.run(session.prompt("question A again", tools=[], anchor="cell-a"))
    roles = [m.role for m in session.messages]
    assert roles == ["branchSummary", "user", "assistant"]
    assert "question A" in session.messages[0].summary and "question B" in session.messages[0].summary


def test_a_message_recorded_while_a_run_streams_joins_after_it(session):
    faux.set_responses(["done"])
    note = CustomMessage(custom_type="ext", content="from another task", display=True)

    async def main():
        events = []

        def on_event(event):
            events.append(event.type)
            if event.type == "message_start" and events.count("message_start") == 1:
                session.record(note)  # while the run streams: it must not split the run's messages

        await session.prompt("hi", tools=[], on_event=on_event)
        return events

    events = asyncio.run(main())
    assert "agent_end" in events
    assert [m.role for m in session.messages] == ["user", "assistant", "custom"]


def test_the_loop_stopping_a_run_is_recorded_in_the_sessions_words(session):
    faux.set_responses([faux.message([faux.tool_call("ls", {})])] * 3)
    asyncio.run(session.prompt("look", tools=["ls"], max_turns=1))
    stop = session.messages[-1]
    assert stop.role == "custom" and stop.custom_type == "pi_notebook.run_stopped"
    assert stop.content == "Stopped after 1 turn (max_turns=1) before the model gave an answer."


def test_compaction_during_a_run_is_told_to_the_listener_and_stored(tmp_path, fresh_faux):
    settings = SessionSettings(default_model="faux/faux-1", reserve_tokens=100, keep_recent_tokens=50)
    with AgentSession.open(tmp_path / "s.jsonl", settings, cwd=str(tmp_path)) as session:
        model = faux.model("tiny", context_window=400)
        told = []
        for i in range(4):
            faux.set_responses(["a summary of the talk", f"answer {i} " + "words " * 60])
            asyncio.run(session.prompt(f"question {i} " + "more " * 60, model=model, tools=[], on_event=told.append))
        assert any(isinstance(e, CompactionEvent) for e in told)
        assert any(e.type == "compaction" for e in session.file.entries)
        preview = session.preview()
        assert preview.call.llm_messages[0].role == "user"  # the summary stands for the older part
        assert "summary" in preview.call.llm_messages[0].content[0].text.lower()


def test_a_users_transform_runs_first_in_the_run_and_in_the_preview(session):
    seen = []

    def last_two(messages):
        seen.append(len(messages))
        return messages[-2:]

    session.transform_context = last_two
    faux.set_responses(["1", "2"])
    asyncio.run(session.prompt("one", tools=[]))
    asyncio.run(session.prompt("two", tools=[]))
    assert [m.role for m in faux.calls[-1].messages] == ["assistant", "user"]  # what the run sent
    sent = session.preview("three").request()["messages"]
    assert [m["role"] for m in sent] == ["assistant", "user"] and sent[-1]["content"][0]["text"] == "three"
    assert seen[-1] == len(session.messages) + 1  # it saw the history and the new prompt, as the run does


@pytest.mark.parametrize("spec", ["anthropic/claude-sonnet-4-5", "openai/gpt-5.5", "google/gemini-2.5-flash", "local"])
def test_the_next_request_of_an_empty_session_has_no_turn_and_no_stand_in(session, spec):
    from pi_notebook.agent_core.preview import NEXT_PROMPT
    from pi_notebook.ai import get_model

    model = get_model(spec)
    body = session.preview(plan=session.plan_run(model, tools=[])).request()
    turns = {"anthropic-messages": "messages", "openai-responses": "input", "google-generative-ai": "contents"}
    field = turns.get(model.api, "messages")
    assert NEXT_PROMPT not in json.dumps(body)
    assert [t for t in body[field] if t.get("role") in ("user", "assistant", "model")] == [] or model.api == "local"
    asked = session.preview("hello", plan=session.plan_run(model, tools=[])).request()
    assert "hello" in json.dumps(asked[field])  # with the prompt: the turn is there
