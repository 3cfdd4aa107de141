"""The inspector shows the next request exactly: its body is the body the next ``%%agent`` sends, minus the new
prompt, before the first run and after it. Checked against what really leaves the kernel: for the offline
default, the request the in-process model is given (the provider's ``on_payload`` hook, Pi's ``onPayload``);
for Anthropic and OpenAI, the JSON the official SDK puts on the wire to a server on 127.0.0.1. Equal means equal
JSON documents, compared as canonical bytes (sorted keys, no spaces): the SDKs order and space their own output.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from pi_notebook import inspect
from tests.ai import anthropic_sse as anthropic_wire
from tests.ai import responses_sse as responses_wire
from tests.ai.scripted_server import Reply, ScriptedServer


def canonical(body: Any) -> bytes:
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def without_turn(body: dict[str, Any], field: str, prompt: str) -> dict[str, Any]:
    """``body`` without the one turn that holds the prompt (checked to be there, once, and to hold only it)."""
    turns = body[field]
    holding = [t for t in turns if prompt in json.dumps(t, ensure_ascii=False)]
    assert len(holding) == 1, holding
    assert prompt == _only_text(holding[0]), holding[0]
    return {**body, field: [t for t in turns if t is not holding[0]]}


def _only_text(turn: dict[str, Any]) -> str:
    content = turn.get("content")
    if isinstance(content, str):
        return content
    (block,) = content
    return block["text"]


def shown(widget) -> dict[str, Any]:
    assert not widget.busy
    return widget.requests[widget.provider]


@pytest.fixture
def offline(monkeypatch):
    monkeypatch.setenv("OLLAMA_HOST", "127.0.0.1:9")  # nothing answers there: the default is the offline model


def test_the_offline_default_before_and_after_the_first_run(shell, offline):
    pytest.importorskip("llama_cpp")
    session = shell.session
    widget = inspect(session)
    assert widget.provider.startswith("local (")  # the model the next %%agent runs, not a catalogue default
    payloads: list[dict[str, Any]] = []
    session.agent.stream_options["on_payload"] = lambda body, model: payloads.append(json.loads(json.dumps(body)))
    for prompt in ("Say hello in one word.", "What is 2 + 2?"):
        before = shown(widget)
        payloads.clear()
        result = shell.cell(f"%%agent\n{prompt}")
        assert result.error_in_exec is None, result.error_in_exec
        sent = payloads[0]  # the run's first request (a tool call may add more)
        assert sent["messages"][-1] == {"role": "user", "content": prompt}
        assert canonical(before) == canonical(without_turn(sent, "messages", prompt))
        # and what the view says the tools and the system prompt are is what was sent
        assert before["messages"][0] == sent["messages"][0]
    assert "local" in widget.provider and "on_payload" not in json.dumps(widget.get_state(), default=str)


@pytest.fixture
def server():
    with ScriptedServer() as s:
        yield s


def anthropic_reply(text: str) -> Reply:
    return Reply(chunks=anthropic_wire.response(anthropic_wire.text_block(0, text)))


def openai_reply(text: str) -> Reply:
    return Reply(chunks=responses_wire.response(responses_wire.message("msg_1", 0, text)))


PROVIDERS = {
    "anthropic": ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "", anthropic_reply, "messages", "anthropic-messages"),
    "openai": ("OPENAI_API_KEY", "OPENAI_BASE_URL", "/v1", openai_reply, "input", "openai-responses"),
}


@pytest.mark.parametrize("name", list(PROVIDERS))
def test_a_provider_over_http_before_and_after_the_first_run(shell, server, monkeypatch, name):
    key_var, url_var, suffix, reply, turns, api = PROVIDERS[name]
    monkeypatch.setenv(key_var, f"fake-{name}-key-for-the-exact-test")
    monkeypatch.setenv(url_var, server.url + suffix)
    shell.cell("%bash echo context the model sees")  # a history that is not only prompts and answers
    widget = inspect(shell.session)
    assert widget.provider.startswith(f"{api} (")  # the default model by key, with its tools and prompt
    for prompt in ("What did the shell print?", "And in French?"):
        before = shown(widget)
        server.add(reply("An answer."))
        result = shell.cell(f"%%agent\n{prompt}")
        assert result.error_in_exec is None, result.error_in_exec
        sent = server.requests[-1].json()
        assert canonical(before) == canonical(without_turn(sent, turns, prompt)), (before, sent)
        assert before.get("tools") and before.get("tools") == sent.get("tools")  # Pi's default tools, as sent
    assert f"fake-{name}-key" not in json.dumps(widget.get_state(), default=str)


def test_a_preview_with_the_prompt_is_the_request_itself(shell, server, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "fake-anthropic-key-for-the-exact-test")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
    session = shell.session
    server.add(anthropic_reply("Fine."))
    shell.cell("%%agent\nHow are you?")
    prompt = "Name a colour."
    expected = session.preview(prompt).request()
    server.add(anthropic_reply("Blue."))
    shell.cell(f"%%agent\n{prompt}")
    assert canonical(expected) == canonical(server.requests[-1].json())
