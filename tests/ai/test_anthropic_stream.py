"""The anthropic-messages transport: the real ``anthropic`` SDK against a scripted server on 127.0.0.1.

The server speaks Anthropic's SSE wire format (``tests/ai/anthropic_sse.py``); everything is driven through
``stream()`` / ``complete()``, so failures must arrive as data, never as exceptions.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time

import pytest

from pi_notebook.ai.abort import AbortController
from pi_notebook.ai.models import calculate_cost, get_model
from pi_notebook.ai.options import StreamOptions
from pi_notebook.ai.providers.anthropic import CLAUDE_CODE_VERSION, map_stop_reason
from pi_notebook.ai.providers.anthropic_convert import CLAUDE_CODE_IDENTITY, build_anthropic_request
from pi_notebook.ai.streaming import complete, stream
from pi_notebook.ai.types import Context, Tool, Usage, UserMessage

from . import anthropic_sse as wire
from .scripted_server import Reply, ScriptedServer, sse

pytest.importorskip("anthropic")
# The SDK warns that the catalogue's Sonnet 4.5 is deprecated; irrelevant to a scripted server.
pytestmark = pytest.mark.filterwarnings("ignore:The model .* is deprecated:DeprecationWarning")

KEY = "sk-ant-test-000"
OAUTH = "sk-ant-oat01-test-000"
WEATHER = Tool(
    name="get_weather",
    description="Weather for a place.",
    parameters={"type": "object", "properties": {"location": {"type": "string"}}, "required": ["location"]},
)


@pytest.fixture(autouse=True)
def clean_env(monkeypatch):
    # The developer's own credentials or SDK settings must not leak into (or change) these tests.
    for name in (
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_OAUTH_TOKEN",
        "ANTHROPIC_AUTH_TOKEN",
        "ANTHROPIC_BASE_URL",
        "ANTHROPIC_CUSTOM_HEADERS",
        "ANTHROPIC_PROFILE",
        "PI_CACHE_RETENTION",
    ):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="module")
def shared_server():
    with ScriptedServer() as s:
        yield s


@pytest.fixture
def server(shared_server):
    # One server for the module (stopping one takes half a second); each test starts with a clean script.
    shared_server.replies.clear()
    shared_server.requests.clear()
    return shared_server


def model_for(server, **overrides):
    return get_model("anthropic/claude-sonnet-4-5", base_url=server.url, **overrides)


def ask(text="Hi", **kw):
    return Context(system_prompt="Be brief.", messages=[UserMessage(content=text, timestamp=1)], **kw)


async def _collect(s):
    return [e async for e in s], await s.result()


def run(server, context=None, model=None, **options):
    options.setdefault("api_key", KEY)
    return asyncio.run(_collect(stream(model or model_for(server), context or ask(), **options)))


def assert_no_key(events, key=KEY):
    for event in events:
        assert key not in json.dumps(event.to_pi_json())


def types(events):
    return [e.type for e in events]


# --- responses ---------------------------------------------------------------------------------------


def test_plain_text_streams_pis_events_and_a_final_message_with_usage_and_cost(server):
    text = wire.text_block(0, "Hello", " there")
    server.add(Reply(chunks=wire.response(text, input_tokens=25, cache_read=10, cache_write=5, output_tokens=15)))
    model = model_for(server)
    events, final = run(server, model=model)
    assert types(events) == ["start", "text_start", "text_delta", "text_delta", "text_end", "done"]
    assert [e.delta for e in events if e.type == "text_delta"] == ["Hello", " there"]
    assert all(e.content_index == 0 for e in events[1:-1])
    assert events[4].content == "Hello there"
    start = events[0].partial
    assert (start.usage.input, start.usage.cache_read, start.usage.cache_write) == (25, 10, 5)
    assert events[-1].reason == "stop" and events[-1].message is final

    expected_usage = Usage(input=25, output=15, cache_read=10, cache_write=5, total_tokens=55)
    calculate_cost(model, expected_usage)
    assert final.usage == expected_usage
    assert final.usage.cost.total == pytest.approx((25 * 3 + 15 * 15 + 10 * 0.3 + 5 * 3.75) / 1e6)
    pi = final.to_pi_json()
    del pi["timestamp"]
    assert pi == {
        "role": "assistant",
        "content": [{"type": "text", "text": "Hello there"}],
        "api": "anthropic-messages",
        "provider": "anthropic",
        "model": "claude-sonnet-4-5",
        "usage": expected_usage.to_pi_json(),
        "stopReason": "stop",
    }


def test_thinking_with_signature_then_text(server):
    thinking = wire.thinking_block(0, ["Two plus ", "two."], ["EqQBCgIYAh", "IM1gbcDa=="])
    server.add(Reply(chunks=wire.response(thinking, wire.text_block(1, "It is 4."))))
    events, final = run(server, reasoning="low")
    assert types(events) == [
        "start",
        "thinking_start",
        "thinking_delta",
        "thinking_delta",
        "thinking_end",
        "text_start",
        "text_delta",
        "text_end",
        "done",
    ]
    assert events[4].content == "Two plus two." and events[4].content_index == 0
    assert events[5].content_index == 1
    assert [b.to_pi_json() for b in final.content] == [
        {"type": "thinking", "thinking": "Two plus two.", "thinkingSignature": "EqQBCgIYAhIM1gbcDa=="},
        {"type": "text", "text": "It is 4."},
    ]
    assert server.requests[0].json()["thinking"] == {"type": "enabled", "budget_tokens": 2048}


def test_redacted_thinking_keeps_the_encrypted_payload(server):
    data = "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP"
    server.add(Reply(chunks=wire.response(wire.redacted_block(0, data), wire.text_block(1, "Done."))))
    events, final = run(server)
    assert types(events)[1:4] == ["thinking_start", "thinking_end", "text_start"]
    assert events[2].content == "[Reasoning redacted]"
    assert final.content[0].to_pi_json() == {
        "type": "thinking",
        "thinking": "[Reasoning redacted]",
        "thinkingSignature": data,
        "redacted": True,
    }


def test_two_parallel_tool_calls_have_parsed_arguments_on_every_delta(server):
    chunks = wire.response(
        wire.text_block(0, "Checking both."),
        wire.tool_use_block(1, "toolu_01A", "get_weather", '{"loc', 'ation": "Par', 'is"}'),
        wire.tool_use_block(2, "toolu_01B", "get_weather", "", '{"location":', ' "Tokyo"', "}"),
        stop_reason="tool_use",
    )
    server.add(Reply(chunks=chunks))
    events, final = run(server, ask(tools=[WEATHER]))
    deltas = [e for e in events if e.type == "toolcall_delta"]
    assert [e.content_index for e in deltas] == [1, 1, 1, 2, 2, 2, 2]
    for event in deltas:
        assert isinstance(event.partial.content[event.content_index].arguments, dict)
    assert deltas[1].partial.content[1].arguments == {"location": "Par"}
    assert deltas[2].partial.content[1].arguments == {"location": "Paris"}
    ends = [e for e in events if e.type == "toolcall_end"]
    assert [(e.tool_call.id, e.tool_call.arguments) for e in ends] == [
        ("toolu_01A", {"location": "Paris"}),
        ("toolu_01B", {"location": "Tokyo"}),
    ]
    assert [b.type for b in final.content] == ["text", "toolCall", "toolCall"]
    assert final.content[2].to_pi_json() == {
        "type": "toolCall",
        "id": "toolu_01B",
        "name": "get_weather",
        "arguments": {"location": "Tokyo"},
    }
    assert final.stop_reason == "toolUse" and events[-1].reason == "toolUse"


@pytest.mark.parametrize(
    ("anthropic_reason", "ours", "error"),
    [
        ("end_turn", "stop", None),
        ("max_tokens", "length", None),
        ("tool_use", "toolUse", None),
        ("pause_turn", "stop", None),
        ("stop_sequence", "stop", None),
        ("refusal", "error", "The model refused to answer (stop reason: refusal)"),
        ("sensitive", "error", "The response was flagged by a safety filter (stop reason: sensitive)"),
        ("something_new", "error", "Unhandled stop reason: something_new"),
    ],
)
def test_stop_reasons(server, anthropic_reason, ours, error):
    server.add(Reply(chunks=wire.response(wire.text_block(0, "Partial"), stop_reason=anthropic_reason)))
    events, final = run(server)
    assert final.stop_reason == ours and final.error_message == error
    assert events[-1].type == ("error" if error else "done")
    assert final.content[0].text == "Partial"


def test_map_stop_reason_rejects_unknown_reasons():
    assert map_stop_reason("max_tokens") == "length"
    with pytest.raises(RuntimeError, match="Unhandled stop reason: nope"):
        map_stop_reason("nope")


# --- the request -------------------------------------------------------------------------------------


def test_the_body_is_build_anthropic_request_and_the_key_is_only_in_the_auth_header(server):
    server.add(Reply(chunks=wire.response(wire.text_block(0, "ok"))))
    model = model_for(server, headers={"x-model-header": "m", "x-both": "model"})
    context = ask(tools=[WEATHER])
    _, final = run(server, context, model, headers={"x-option-header": "o", "x-both": "options"})
    assert final.stop_reason == "stop"
    (request,) = server.requests
    assert request.method == "POST" and request.path == "/v1/messages"
    assert request.json() == build_anthropic_request(model, context, StreamOptions(api_key=KEY))
    assert KEY.encode() not in request.body
    carrying = {name: value for name, value in request.headers.items() if KEY in value}
    # The SDK chooses the header: `x-api-key` (SDK 0.x/1.x) or a bearer token (newer SDKs).
    assert carrying in ({"x-api-key": KEY}, {"authorization": f"Bearer {KEY}"})
    headers = request.headers
    betas = "fine-grained-tool-streaming-2025-05-14,interleaved-thinking-2025-05-14"
    assert headers["anthropic-beta"] == betas
    assert (headers["x-model-header"], headers["x-option-header"], headers["x-both"]) == ("m", "o", "options")
    assert "x-app" not in headers


def test_on_payload_sees_the_exact_body_and_may_replace_it(server):
    server.add(Reply(chunks=wire.response(wire.text_block(0, "a"))), Reply(chunks=wire.response()))
    seen = []
    run(server, on_payload=lambda payload, model: seen.append((json.loads(json.dumps(payload)), model.id)))
    assert seen == [(server.requests[0].json(), "claude-sonnet-4-5")]

    async def replace(payload, model):  # an async hook, returning a new body, as Pi allows
        return {**payload, "metadata": {"user_id": "u-1"}}

    run(server, on_payload=replace)
    assert server.requests[1].json()["metadata"] == {"user_id": "u-1"}


def test_oauth_tokens_speak_as_claude_code_and_tool_names_map_back(server, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_OAUTH_TOKEN", OAUTH)  # from the environment: the body must see it too
    call = wire.tool_use_block(0, "toolu_1", "Read", '{"path": "a.txt"}')
    server.add(Reply(chunks=wire.response(call, stop_reason="tool_use")))
    read = Tool(name="read", description="Read a file.", parameters={"type": "object", "properties": {}})
    events, final = run(server, ask(tools=[read]), api_key=None)
    assert final.stop_reason == "toolUse"
    assert final.content[0].name == "read" and final.content[0].arguments == {"path": "a.txt"}
    request = server.requests[0]
    assert request.headers["authorization"] == f"Bearer {OAUTH}" and "x-api-key" not in request.headers
    assert request.headers["anthropic-beta"].startswith("claude-code-20250219,oauth-2025-04-20,")
    assert request.headers["user-agent"] == f"claude-cli/{CLAUDE_CODE_VERSION}"
    assert request.headers["x-app"] == "cli"
    body = request.json()
    assert body["system"][0]["text"] == CLAUDE_CODE_IDENTITY and body["tools"][0]["name"] == "Read"
    assert_no_key(events, OAUTH)


# --- failures ----------------------------------------------------------------------------------------


def test_429_is_retried_by_the_sdk(server):
    limited = wire.error_body("rate_limit_error", "Number of requests has exceeded your rate limit")
    server.add(
        Reply.json(429, limited, {"retry-after-ms": "1", "retry-after": "0"}),
        Reply(chunks=wire.response(wire.text_block(0, "made it"))),
    )
    events, final = run(server)
    assert len(server.requests) == 2
    assert final.stop_reason == "stop" and final.content[0].text == "made it"
    assert types(events).count("done") == 1 and types(events).count("start") == 1


def test_500_without_retries_is_an_error_message_with_the_apis_text(server):
    failure = wire.error_body("api_error", "Internal server error")
    server.add(Reply.json(500, failure, {"request-id": "req_1"}))
    events, final = run(server, max_retries=0)
    assert len(server.requests) == 1
    assert types(events) == ["error"] and events[0].reason == "error"
    assert final.stop_reason == "error"
    assert final.error_message == "500 api_error: Internal server error (request id req_1)"
    assert (final.api, final.model) == ("anthropic-messages", "claude-sonnet-4-5")
    assert_no_key(events)


def test_an_error_event_mid_stream_keeps_the_partial(server):
    chunks = wire.message_start() + wire.text_block(0, "Half")[:2]
    server.add(Reply(chunks=[*chunks, sse(wire.error_body("overloaded_error", "Overloaded"), "error")]))
    _, final = run(server)
    assert final.stop_reason == "error" and final.error_message == "overloaded_error: Overloaded"
    assert final.content[0].text == "Half"


def test_a_dropped_connection_keeps_the_partial_text(server):
    chunks = wire.message_start() + wire.text_block(0, "Hello ", "wor", "ld")
    server.add(Reply(chunks=chunks, disconnect_after=4))  # start, block start, two deltas
    events, final = run(server)
    assert types(events) == ["start", "text_start", "text_delta", "text_delta", "error"]
    assert final.stop_reason == "error" and final.error_message.startswith("Connection error: ")
    assert final.content[0].text == "Hello wor"
    assert final.usage.input == 25
    assert_no_key(events)


def test_a_stream_closed_before_message_stop_is_an_error(server):
    server.add(Reply(chunks=wire.message_start() + wire.text_block(0, "Hi")))
    _, final = run(server)
    assert final.stop_reason == "error"
    assert final.error_message == "Anthropic's stream ended before message_stop"
    assert final.content[0].text == "Hi"


def test_a_malformed_sse_chunk_is_an_error_message_not_an_exception(server):
    chunks = wire.message_start() + wire.text_block(0, "Hi")[:2]
    server.add(Reply(chunks=[*chunks, b"event: content_block_delta\ndata: {not json\n\n"]))
    final = asyncio.run(complete(model_for(server), ask(), api_key=KEY))
    assert final.stop_reason == "error"
    assert final.error_message.startswith("Malformed event in Anthropic's stream: ")
    assert final.content[0].text == "Hi"


def test_abort_mid_stream_returns_promptly_with_the_partial(server):
    server.add(Reply(chunks=wire.response(wire.text_block(0, *["tok "] * 40)), chunk_delay=0.2))
    controller = AbortController()

    async def consume():
        s = stream(model_for(server), ask(), api_key=KEY, signal=controller.signal)
        deltas, aborted_at = 0, None
        async for event in s:
            if event.type == "text_delta":
                deltas += 1
                if deltas == 3:
                    controller.abort()
                    aborted_at = time.monotonic()
        return await s.result(), time.monotonic() - aborted_at

    final, elapsed = asyncio.run(consume())
    assert elapsed < 3.0  # the server would need 7 more seconds; loose for a busy 2-core machine
    assert final.stop_reason == "aborted" and final.error_message == "Request was aborted"
    assert final.content[0].text == "tok tok tok "


def test_a_missing_key_names_the_environment_variable(server):
    events, final = run(server, api_key=None)
    assert types(events) == ["error"]
    assert final.stop_reason == "error" and "ANTHROPIC_API_KEY" in final.error_message
    assert server.requests == []


def test_without_the_sdk_the_error_says_how_to_install_it(server, monkeypatch):
    monkeypatch.setitem(sys.modules, "anthropic", None)  # makes `import anthropic` fail
    _, final = run(server)
    assert final.stop_reason == "error"
    assert "pip install 'pi_notebook[anthropic]'" in final.error_message
    assert server.requests == []
