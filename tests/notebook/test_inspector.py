"""InspectorWidget: rows from the trace, exact request bodies, refresh after agent runs, safe fallbacks."""

from __future__ import annotations

import asyncio
import json

import pytest

from pi_notebook.agent import Agent, BashExecutionMessage, CustomMessage, prepare_llm_messages, to_pi_json
from pi_notebook.ai import Context, TextContent, Usage, UserMessage, faux, get_model
from pi_notebook.ai.models import DEFAULT_ANTHROPIC_MODEL, DEFAULT_OPENAI_MODEL
from pi_notebook.ai.request import build_request
from pi_notebook.coding_agent.compaction import CompactionSettings, Compactor
from pi_notebook.coding_agent.run_policy import DEFAULT_SYSTEM_PROMPT
from pi_notebook.coding_agent.tools import TOOL_FACTORIES
from pi_notebook.coding_agent.trace import trace_boundary
from pi_notebook.notebook.inspector import InspectorWidget, inspect

ANTHROPIC = "anthropic-messages (claude-sonnet-4-5)"
OPENAI = "openai-responses (gpt-5-mini)"
CHAT = "openai-completions (gpt-5-mini)"
GEMINI = "google-generative-ai (gemini-2.5-flash)"
FAUX = "faux (faux-1)"

pytestmark = pytest.mark.usefixtures("fresh_faux")


def user(text):
    return UserMessage(content=[TextContent(text=text)])


def sample():
    return [
        user("what is in the folder?"),
        faux.message("Let me look."),
        BashExecutionMessage(command="ls", output="a.txt\n", exit_code=0),
        BashExecutionMessage(command="cat .env", output="TOKEN=x", exit_code=0, exclude_from_context=True),
        CustomMessage(custom_type="ext", content="hidden note", display=False),
        faux.message("", stop_reason="error", error_message="503"),
    ]


def test_rows_are_the_trace_and_requests_are_exact_bodies():
    messages = sample()
    w = inspect(messages)
    assert w.rows == trace_boundary(messages).to_json()["rows"]
    assert [r["status"] for r in w.rows] == ["passed", "passed", "translated", "dropped", "translated", "dropped"]
    assert list(w.requests) == [ANTHROPIC, OPENAI, CHAT, GEMINI] and w.provider == ANTHROPIC
    # Each body is what the provider is sent for the next prompt, minus that prompt (whatever it will be).
    asked = Context(messages=[*prepare_llm_messages(messages), user("and now?")])
    for key, spec, turns in ((ANTHROPIC, DEFAULT_ANTHROPIC_MODEL, "messages"), (OPENAI, DEFAULT_OPENAI_MODEL, "input")):
        sent = build_request(get_model(spec), asked)
        assert w.requests[key] == {**sent, turns: [t for t in sent[turns] if "and now?" not in json.dumps(t)]}
    assert w.context_window == 200_000 and w.model_name == "anthropic/claude-sonnet-4-5"
    assert w.total_tokens == trace_boundary(messages).total_tokens > 0
    json.dumps(w.get_state())


def test_the_provider_reported_usage_of_the_last_successful_reply():
    assert inspect(sample()).reported_usage == {}  # no reply reported usage
    reported = Usage(input=30, cache_read=1000, cache_write=200, output=40, total_tokens=1270)
    messages = [
        user("hi"),
        faux.message("older", usage=Usage(input=5, output=1, total_tokens=6)),
        user("again"),
        faux.message("newer", usage=reported),
        user("and?"),
        faux.message("", stop_reason="aborted", usage=Usage(input=9999, total_tokens=9999)),  # skipped
        faux.message("", usage=Usage()),  # reported nothing: skipped
    ]
    w = inspect(messages)
    assert w.reported_usage == {
        "index": 3, "tokens": 1230, "input": 30, "cacheRead": 1000, "cacheWrite": 200, "output": 40,
        "model": "faux/faux-1",
    }  # fmt: skip
    assert w.total_tokens < 100  # the estimate (chars/4 of the messages) stays a separate figure
    assert "reported_usage" in w.get_state()
    json.dumps(w.get_state())
    assert inspect([to_pi_json(m) for m in messages]).reported_usage["index"] == 3  # Pi JSON works too


def test_the_chosen_model_comes_first():
    w = inspect(sample(), model="openai/gpt-5-mini")
    assert (
        w.provider == OPENAI and list(w.requests) == [OPENAI, ANTHROPIC, CHAT, GEMINI] and w.context_window == 400_000
    )


def test_an_agent_brings_its_system_prompt_tools_thinking_and_model(tmp_path):
    tools = [TOOL_FACTORIES["read"](str(tmp_path))]
    agent = Agent(faux.model(), system_prompt="Be brief.", tools=tools, messages=sample(), thinking_level="low")
    agent.stream_options["api_key"] = "sk-ant-SECRET-VALUE-42"
    w = inspect(agent)
    assert (
        list(w.requests) == [FAUX, ANTHROPIC, OPENAI, CHAT, GEMINI]
        and w.provider == FAUX
        and w.model_name == "faux/faux-1"
    )
    context = Context(
        system_prompt="Be brief.",
        messages=[*prepare_llm_messages(sample()), user("next")],
        tools=[t.to_tool() for t in tools],
    )
    sent = build_request(get_model(DEFAULT_ANTHROPIC_MODEL), context, reasoning="low")
    expected = {**sent, "messages": sent["messages"][:-1]}  # the next request, minus its prompt
    assert w.requests[ANTHROPIC] == expected
    assert w.requests[ANTHROPIC]["system"][0]["text"] == "Be brief." and "thinking" in expected
    assert w.requests[ANTHROPIC]["tools"][0]["name"] == "read"
    assert "SECRET" not in json.dumps(w.get_state(), default=str)


def test_repr_and_mimebundle_are_stable_and_escaped():
    messages = [user("<script>alert(1)</script>"), faux.message("ok & done")]
    w = inspect(messages)
    assert repr(w) == repr(inspect(messages))
    assert repr(w) == f"<InspectorWidget: 2 messages → 2 sent, ~{w.total_tokens:,} tokens, {ANTHROPIC}>"
    data, _ = w._repr_mimebundle_()
    assert {"application/vnd.jupyter.widget-view+json", "text/plain", "text/html"} <= set(data)
    assert data["text/plain"] == repr(w) and "0x" not in data["text/plain"]
    page = data["text/html"]
    assert "<script" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<th>AgentMessage</th><th>What the LLM got</th>" in page and page.count("<tr>") == 3
    assert "passed: LLM role: sent unchanged" in page and f"Request body: {ANTHROPIC}" in page


def test_a_compactor_is_previewed_without_running_it():
    model = faux.model(context_window=2000)
    history = [user("A" * 2000), faux.message("B" * 2000), user("C" * 2000),
               faux.message("D" * 400, usage=Usage(input=1500, output=100, total_tokens=1600))]  # fmt: skip
    compactor = Compactor(model, CompactionSettings(reserve_tokens=500, keep_recent_tokens=150))
    agent = Agent(model, messages=history, transform_context=compactor)
    before = inspect(agent)
    assert faux.calls == [] and any("next LLM call compacts" in note for note in before.notes)
    faux.set_responses(["THE SUMMARY", "answer"])
    asyncio.run(agent.prompt("next"))
    calls = len(faux.calls)
    w = inspect(agent)
    assert len(faux.calls) == calls  # no summary written by the inspector
    assert [r["status"] for r in w.rows][:3] == ["summarised", "summarised", "injected"]
    assert "THE SUMMARY" in w.rows[2]["produced_text"]


def test_a_failing_transform_is_a_note_not_a_crash():
    def broken(messages):
        raise RuntimeError("kaput")

    agent = Agent(faux.model(), messages=[user("hi")], transform_context=broken)
    w = inspect(agent)
    assert any("transform_context failed: RuntimeError: kaput" in n for n in w.notes) and len(w.rows) == 1


def test_refreshes_after_each_magic_in_a_notebook(shell):
    session = shell.session
    w = inspect(session)
    assert w.rows == [] and any("no %%agent run yet" in n for n in w.notes)
    faux.set_responses(["hello back"])
    shell.agent("hi there")
    assert [r["role"] for r in w.rows] == ["user", "assistant"] and w.provider == FAUX
    assert w.notes == []
    # built as the agent loop builds it (tools=None explicitly: --tools none)
    context = Context(system_prompt=DEFAULT_SYSTEM_PROMPT, messages=prepare_llm_messages(session.messages), tools=None)
    assert w.requests[FAUX] == build_request(faux.model(), context)
    sent = faux.calls[-1].to_pi_json()  # what the faux model received, one reply shorter
    assert {**w.requests[FAUX], "messages": w.requests[FAUX]["messages"][:-1]} == sent
    assert w.requests[ANTHROPIC]["system"][0]["text"] == DEFAULT_SYSTEM_PROMPT
    # a %bash cell updates it too (the session tells it, on the kernel's main thread)
    shell.cell("%bash echo from the shell")
    assert w.rows[-1]["role"] == "bashExecution" and w.rows[-1]["status"] == "translated"
    # a model picked in the view survives refreshes
    w.provider = OPENAI
    faux.set_responses(["again"])
    shell.agent("once more")
    assert len(w.rows) == 5 and w.provider == OPENAI
    w.close()
    faux.set_responses(["after close"])
    shell.agent("ignored by the closed inspector")
    assert len(w.rows) == 5


def test_a_session_file_and_pi_json_work_too(tmp_path):
    from pi_notebook.coding_agent.session import SessionFile

    file = SessionFile.create(tmp_path / "s.jsonl", cwd=str(tmp_path))
    for m in sample()[:3]:
        file.append_message(m)
    try:
        w = inspect(file)
    finally:
        file.close()
    assert [r["role"] for r in w.rows] == ["user", "assistant", "bashExecution"] and w.provider == FAUX
    as_json = inspect([to_pi_json(m) for m in sample()])
    assert [r["status"] for r in as_json.rows] == [r["status"] for r in inspect(sample()).rows]
    assert isinstance(as_json, InspectorWidget)
