"""`%%agent --model anthropic/...` and `openai/...` through the magics and the official SDKs, against a server on
127.0.0.1 speaking each wire protocol. ``ANTHROPIC_BASE_URL`` / ``OPENAI_BASE_URL`` point the catalogue's models
at it, as they would at a proxy; nothing in the test replaces the model resolver."""

import json

import pytest

import pi_notebook
from tests.ai import anthropic_sse as anthropic_wire
from tests.ai import responses_sse as responses_wire
from tests.ai.scripted_server import Reply, ScriptedServer, sse

ANTHROPIC_KEY = "fake-anthropic-key-notebook-test"
OPENAI_KEY = "fake-openai-key-notebook-test"


@pytest.fixture
def server():
    with ScriptedServer() as s:
        yield s


def openai_reply(text: str) -> Reply:
    """A Responses API stream (``openai/...`` models use it, as in Pi)."""
    message = responses_wire.message("msg_1", 0, text)
    return Reply(chunks=responses_wire.response(message, usage=responses_wire.usage(30, 4, cached=10)))


def completions_reply(text: str) -> Reply:
    def chunk(delta, finish=None):
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        body = {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "gpt-5.5", "choices": [choice]}
        return sse(body)

    usage = {"prompt_tokens": 30, "completion_tokens": 4, "total_tokens": 34}
    last = sse({"id": "c1", "object": "chat.completion.chunk", "created": 1, "choices": [], "usage": usage})
    return Reply(chunks=[chunk({"role": "assistant", "content": ""}), chunk({"content": text}), chunk({}, "stop"),
                         last, b"data: [DONE]\n\n"])  # fmt: skip


def no_key_anywhere(shell, key: str, *outputs: str) -> None:
    session = shell.session
    assert key not in shell.session.file.path.read_text()
    assert key not in json.dumps([m.to_pi_json() for m in session.messages])
    assert key not in json.dumps(pi_notebook.show(session).get_state(), default=str)
    for out in outputs:
        assert key not in out


def test_an_anthropic_model_through_the_magics_and_the_sdk(shell, server, monkeypatch, capsys):
    monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_KEY)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
    server.add(Reply(chunks=anthropic_wire.response(anthropic_wire.text_block(0, "Par", "is."))))
    shell.agent("Capital of France?", "--model anthropic/claude-opus-4-8 --tools none --thinking off")
    [request] = server.requests
    body = request.json()
    assert request.path == "/v1/messages"
    # The SDK chooses the header: `x-api-key` or a bearer token, depending on its version.
    assert ANTHROPIC_KEY in (request.headers.get("x-api-key"), request.headers.get("authorization", "")[7:])
    assert body["model"] == "claude-opus-4-8" and body["stream"] is True
    text = {"type": "text", "text": "Capital of France?", "cache_control": {"type": "ephemeral"}}
    assert body["messages"] == [{"role": "user", "content": [text]}]  # Pi marks the last user turn for caching
    reply = shell.session.messages[-1]
    assert (reply.provider, reply.model, reply.content[0].text) == ("anthropic", "claude-opus-4-8", "Paris.")
    no_key_anywhere(shell, ANTHROPIC_KEY, capsys.readouterr().out, request.body.decode())


def test_an_openai_model_through_the_magics_and_the_sdk(shell, server, monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    monkeypatch.setenv("OPENAI_BASE_URL", server.url + "/v1")
    server.add(openai_reply("Paris."))
    shell.agent("Capital of France?", "--model openai/gpt-5.5 --tools read --system 'Be brief.'")
    [request] = server.requests
    body = request.json()
    assert request.path == "/v1/responses" and request.headers["authorization"] == f"Bearer {OPENAI_KEY}"
    assert body["model"] == "gpt-5.5" and body["stream"] is True and body["store"] is False
    assert body["input"][:2] == [
        {"role": "developer", "content": "Be brief."},
        {"role": "user", "content": [{"type": "input_text", "text": "Capital of France?"}]},
    ]
    assert [(t["type"], t["name"]) for t in body["tools"]] == [("function", "read")]
    assert body["prompt_cache_key"] == shell.session.file.session_id  # Pi's prompt caching per session
    reply = shell.session.messages[-1]
    assert (reply.api, reply.content[0].text) == ("openai-responses", "Paris.")
    assert (reply.usage.input, reply.usage.cache_read, reply.usage.output) == (20, 10, 4)
    no_key_anywhere(shell, OPENAI_KEY, capsys.readouterr().out, request.body.decode())


def test_openai_completions_stays_selectable_through_the_magics(shell, server, monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    monkeypatch.setenv("OPENAI_BASE_URL", server.url + "/v1")
    server.add(completions_reply("Paris."))
    shell.agent("Capital of France?", "--model openai-completions/gpt-5.5 --tools read --system 'Be brief.'")
    [request] = server.requests
    body = request.json()
    assert request.path == "/v1/chat/completions" and request.headers["authorization"] == f"Bearer {OPENAI_KEY}"
    assert body["model"] == "gpt-5.5" and body["stream"] is True
    assert [m["role"] for m in body["messages"]] == ["developer", "user"]
    assert body["messages"][1]["content"] == [{"type": "text", "text": "Capital of France?"}]
    assert [t["function"]["name"] for t in body["tools"]] == ["read"]
    reply = shell.session.messages[-1]
    assert (reply.api, reply.provider, reply.content[0].text) == ("openai-completions", "openai", "Paris.")
    no_key_anywhere(shell, OPENAI_KEY, capsys.readouterr().out, request.body.decode())


GOOGLE_KEY = "fake-gemini-key-notebook-test"


def test_a_gemini_model_through_the_magics_and_the_sdk(shell, server, monkeypatch, capsys):
    from tests.ai import google_wire

    monkeypatch.setenv("GEMINI_API_KEY", GOOGLE_KEY)
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", server.url + "/v1beta")
    server.add(Reply(chunks=google_wire.response([google_wire.text("Par")], [google_wire.text("is.")])))
    shell.agent("Capital of France?", "--model google/gemini-2.5-flash --tools none --thinking off")
    [request] = server.requests
    body = request.json()
    assert request.path.startswith(google_wire.stream_path("gemini-2.5-flash"))
    assert request.headers["x-goog-api-key"] == GOOGLE_KEY
    assert body["contents"] == [{"role": "user", "parts": [{"text": "Capital of France?"}]}]
    reply = shell.session.messages[-1]
    assert (reply.provider, reply.model, reply.content[0].text) == ("google", "gemini-2.5-flash", "Paris.")
    no_key_anywhere(shell, GOOGLE_KEY, capsys.readouterr().out, request.body.decode())
