"""The openai-completions transport, driven through the real ``openai`` SDK against a scripted local server.

The server speaks OpenAI's wire format: ``data: {chat.completion.chunk}`` lines ending with ``data: [DONE]``.
No network, no real key: the key is ``sk-test-000``.
"""

import asyncio
import json
import logging
import sys
import time

import pytest

from pi_notebook.ai import Context, Tool, UserMessage
from pi_notebook.ai.abort import AbortController
from pi_notebook.ai.models import calculate_cost, get_model
from pi_notebook.ai.options import StreamOptions
from pi_notebook.ai.providers.openai_completions import INSTALL_HINT
from pi_notebook.ai.providers.openai_completions_convert import build_openai_completions_request
from pi_notebook.ai.providers.openai_stream import KEYLESS_PLACEHOLDER
from pi_notebook.ai.streaming import complete, stream
from pi_notebook.ai.types import AssistantMessage, ThinkingContent, ToolCall, ToolResultMessage, Usage
from tests.ai.scripted_server import Reply, ScriptedServer, sse

KEY = "sk-test-000"
DONE = sse("[DONE]")


@pytest.fixture(autouse=True)
def hermetic_env(monkeypatch):
    # The SDK and the key lookup read these; a developer's own settings must not leak into the tests.
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID", "OLLAMA_HOST"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="module")
def shared_server():
    # One server for the module: stopping one costs half a second (its poll interval).
    with ScriptedServer() as s:
        # The abort test hangs up mid-reply on purpose; the server thread's broken pipe is expected.
        s._httpd.handle_error = lambda request, address: None
        yield s


@pytest.fixture
def server(shared_server):
    shared_server.replies.clear()
    shared_server.requests.clear()
    return shared_server


def openai_model(server, **kw):
    return get_model("openai-completions/gpt-4o-mini", base_url=server.url + "/v1", **kw)


def chunk(delta=None, finish=None, **extra):
    """One ``chat.completion.chunk`` as OpenAI streams it."""
    choice = {
        "index": 0,
        "delta": delta if delta is not None else {},
        "logprobs": None,
        "finish_reason": finish,
    }
    body = {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1700000000,
        "model": "gpt-4o-mini-2024-07-18",
        "system_fingerprint": "fp_1",
        "choices": [choice],
        "usage": None,
        **extra,
    }
    return sse(body)


def usage_chunk(prompt=20, completion=7, cached=0, reasoning=0):
    """The last chunk under ``stream_options.include_usage``: no choices, only usage."""
    usage = {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": cached, "audio_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": reasoning, "audio_tokens": 0},
    }
    return sse({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "choices": [], "usage": usage})


def role():
    return chunk({"role": "assistant", "content": "", "refusal": None})


def text_reply(*pieces, finish="stop", **kw):
    chunks = [role(), *(chunk({"content": p}) for p in pieces), chunk({}, finish), usage_chunk(), DONE]
    return Reply(chunks=chunks, **kw)


def ask(text="Say hello.", **kw):
    return Context(system_prompt="Be brief.", messages=[UserMessage(content=text, timestamp=1)], **kw)


def run(coro):
    return asyncio.run(coro)


async def collect(s):
    return [e async for e in s], await s.result()


def types(events):
    return [e.type for e in events]


# --- the happy paths ---------------------------------------------------------------------------------


def test_plain_text_streams_pis_event_sequence_with_usage_and_cost(server):
    chunks = [role(), *(chunk({"content": p}) for p in ("Hel", "lo", "!")), chunk({}, "stop")]
    server.add(Reply(chunks=[*chunks, usage_chunk(prompt=20, completion=7, cached=5), DONE]))
    model = openai_model(server)
    events, final = run(collect(stream(model, ask(), api_key=KEY)))

    assert types(events) == [
        "start",
        "text_start",
        "text_delta",
        "text_delta",
        "text_delta",
        "text_end",
        "done",
    ]
    assert [e.delta for e in events if e.type == "text_delta"] == ["Hel", "lo", "!"]
    assert [e.partial.content[0].text for e in events if e.type == "text_delta"] == ["Hel", "Hello", "Hello!"]
    assert events[5].content == "Hello!" and events[-1].reason == "stop"
    assert final.stop_reason == "stop" and final.error_message is None
    assert final.to_pi_json()["content"] == [{"type": "text", "text": "Hello!"}]
    assert (final.api, final.provider, final.model) == ("openai-completions", "openai", "gpt-4o-mini")
    # Pi's reading: cached tokens are part of prompt_tokens.
    assert (final.usage.input, final.usage.output, final.usage.cache_read, final.usage.cache_write) == (
        15,
        7,
        5,
        0,
    )
    assert final.usage.total_tokens == 27
    expected = calculate_cost(model, Usage(input=15, output=7, cache_read=5, total_tokens=27))
    assert final.usage.cost == expected and final.usage.cost.total > 0
    assert server.requests[0].path == "/v1/chat/completions"


def test_complete_returns_the_final_message(server):
    server.add(text_reply("4"))
    final = run(complete(openai_model(server), ask("2+2?"), StreamOptions(api_key=KEY)))
    assert isinstance(final, AssistantMessage) and final.content[0].text == "4"


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning", "reasoning_text"])
def test_reasoning_then_text_is_a_thinking_block_signed_with_its_field(server, field):
    chunks = [
        role(),
        chunk({field: "Two plus "}),
        chunk({field: "two."}),
        chunk({"content": "4"}),
        chunk({}, "stop"),
        usage_chunk(prompt=10, completion=30, reasoning=20),
        DONE,
    ]
    server.add(Reply(chunks=chunks))
    events, final = run(collect(stream(openai_model(server), ask("2+2?"), api_key=KEY)))

    assert types(events) == [
        "start", "thinking_start", "thinking_delta", "thinking_delta", "thinking_end",
        "text_start", "text_delta", "text_end", "done",
    ]  # fmt: skip
    assert final.content[0] == ThinkingContent(thinking="Two plus two.", thinking_signature=field)
    assert final.content[1].text == "4"
    # completion_tokens already include the 20 reasoning tokens: they are not added twice (unlike Pi 0.58.3).
    assert (final.usage.input, final.usage.output, final.usage.total_tokens) == (10, 30, 40)


def test_the_first_non_empty_reasoning_field_wins(server):
    # chutes.ai fills two fields with the same text; an empty one is skipped.
    chunks = [
        chunk({"reasoning_content": "", "reasoning": "think", "reasoning_text": "think"}),
        chunk({"reasoning_content": "ing", "reasoning": "ing"}),
        chunk({}, "stop"),
        DONE,
    ]
    server.add(Reply(chunks=chunks))
    final = run(complete(openai_model(server), ask(), api_key=KEY))
    assert final.content == [ThinkingContent(thinking="thinking", thinking_signature="reasoning")]


def tool_call_delta(index, id=None, name=None, arguments=""):
    call = {"index": index, "function": {"arguments": arguments}}
    if id is not None:
        call.update(id=id, type="function")
        call["function"]["name"] = name
    return chunk({"tool_calls": [call]})


def split(text, size=3):
    return [text[i : i + size] for i in range(0, len(text), size)]


def test_two_parallel_tool_calls_with_arguments_split_over_many_chunks(server):
    args_a = json.dumps({"path": "notes/today.md", "limit": 20})
    args_b = json.dumps({"command": "ls -la", "timeout": 5})
    chunks = [
        chunk({"role": "assistant", "content": None}),
        tool_call_delta(0, "call_A", "read"),
        *(tool_call_delta(0, arguments=p) for p in split(args_a)),
        tool_call_delta(1, "call_B", "bash"),
        *(tool_call_delta(1, arguments=p) for p in split(args_b)),
        chunk({}, "tool_calls"),
        usage_chunk(),
        DONE,
    ]
    server.add(Reply(chunks=chunks))
    tools = [Tool(name="read", description="Read a file"), Tool(name="bash", description="Run a command")]
    events, final = run(collect(stream(openai_model(server), ask("Look around.", tools=tools), api_key=KEY)))

    deltas = [e for e in events if e.type == "toolcall_delta"]
    assert len(deltas) == 2 + len(split(args_a)) + len(split(args_b))
    for e in deltas:  # the arguments are an object on every delta, never a string
        assert isinstance(e.partial.content[e.content_index].arguments, dict)
    assert "".join(e.delta for e in deltas if e.content_index == 0) == args_a
    assert "".join(e.delta for e in deltas if e.content_index == 1) == args_b
    assert [t for t in types(events) if not t.endswith("delta")] == [
        "start", "toolcall_start", "toolcall_start", "toolcall_end", "toolcall_end", "done",
    ]  # fmt: skip
    assert final.stop_reason == "toolUse" and events[-1].reason == "toolUse"
    assert final.content == [
        ToolCall(id="call_A", name="read", arguments={"path": "notes/today.md", "limit": 20}),
        ToolCall(id="call_B", name="bash", arguments={"command": "ls -la", "timeout": 5}),
    ]
    ends = [e.tool_call for e in events if e.type == "toolcall_end"]
    assert ends == final.content


def test_interleaved_fragments_follow_their_index_and_a_new_id_under_index_0_is_a_new_call(server):
    chunks = [
        tool_call_delta(0, "call_A", "read"),
        tool_call_delta(1, "call_B", "bash"),
        tool_call_delta(0, arguments='{"path": '),
        tool_call_delta(1, arguments='{"command": "ls"}'),
        tool_call_delta(0, arguments='"a.txt"}'),
        # Some servers number every call 0: a new id means a new call.
        tool_call_delta(0, "call_C", "ls"),
        tool_call_delta(0, arguments="{}"),
        chunk({}, "tool_calls"),
        DONE,
    ]
    server.add(Reply(chunks=chunks))
    final = run(complete(openai_model(server), ask(), api_key=KEY))
    assert [(c.id, c.name, c.arguments) for c in final.content] == [
        ("call_A", "read", {"path": "a.txt"}),
        ("call_B", "bash", {"command": "ls"}),
        ("call_C", "ls", {}),
    ]


def test_text_then_tool_call_closes_the_text_block_first(server):
    chunks = [
        chunk({"content": "Let me look."}),
        tool_call_delta(0, "call_A", "ls", "{}"),
        chunk({}, "tool_calls"),
        DONE,
    ]
    server.add(Reply(chunks=chunks))
    events, final = run(collect(stream(openai_model(server), ask(), api_key=KEY)))
    assert types(events) == [
        "start", "text_start", "text_delta", "text_end",
        "toolcall_start", "toolcall_delta", "toolcall_end", "done",
    ]  # fmt: skip
    assert [b.type for b in final.content] == ["text", "toolCall"]


def test_openrouter_encrypted_reasoning_becomes_the_tool_calls_thought_signature(server):
    early = {"type": "reasoning.encrypted", "id": "call_B", "data": "ZW5jcnlwdGVk", "format": "x", "index": 1}
    late = {"type": "reasoning.encrypted", "id": "call_A", "data": "c2VjcmV0", "format": "x", "index": 0}
    chunks = [
        chunk({"reasoning_details": [{"type": "reasoning.text", "text": "hm"}, early]}),
        tool_call_delta(0, "call_A", "read", "{}"),
        chunk({"reasoning_details": [late]}),
        tool_call_delta(1, "call_B", "bash", "{}"),
        chunk({}, "tool_calls"),
        DONE,
    ]
    server.add(Reply(chunks=chunks))
    final = run(complete(openai_model(server), ask(), api_key=KEY))
    assert [json.loads(c.thought_signature) for c in final.content] == [late, early]


# --- the request -------------------------------------------------------------------------------------


def history_context():
    call = ToolCall(id="call_1", name="read", arguments={"path": "a.txt"})
    thought = ThinkingContent(thinking="I should read it.", thinking_signature="reasoning_content")
    earlier = AssistantMessage(
        content=[thought, call],
        api="openai-completions",
        provider="openai-compatible",
        model="qwen3",
        stop_reason="toolUse",
        timestamp=2,
    )
    result = ToolResultMessage(tool_call_id="call_1", tool_name="read", content=[{"type": "text", "text": "hi"}])
    return Context(
        system_prompt="You are terse.",
        messages=[
            UserMessage(content="Read a.txt", timestamp=1),
            earlier,
            result,
            UserMessage(content="And now?"),
        ],
        tools=[Tool(name="read", description="Read a file", parameters={"type": "object", "properties": {}})],
    )


def test_the_body_sent_is_the_built_request_and_the_key_is_only_in_the_authorization_header(server):
    # qwen thinking adds `enable_thinking`, a field the SDK's create() does not know.
    model = get_model(
        "openai-compatible/qwen3",
        base_url=server.url + "/v1",
        reasoning=True,
        compat={"thinkingFormat": "qwen"},
    )
    options = StreamOptions(api_key=KEY, reasoning="high", temperature=0.25, max_tokens=321)
    server.add(text_reply("ok"))
    final = run(complete(model, history_context(), options))
    assert final.stop_reason == "stop"

    (request,) = server.requests
    expected = build_openai_completions_request(model, history_context(), options)
    assert "enable_thinking" in expected and expected["messages"][2]["reasoning_content"]
    assert request.json() == expected
    assert request.headers["authorization"] == f"Bearer {KEY}"
    others = {k: v for k, v in request.headers.items() if k != "authorization"}
    assert KEY not in json.dumps(others) and KEY.encode() not in request.body
    assert KEY not in json.dumps(final.to_pi_json())


def test_on_payload_sees_the_exact_body_before_it_is_sent(server):
    seen = []
    server.add(text_reply("ok"))
    model = openai_model(server)
    run(complete(model, ask(), api_key=KEY, on_payload=lambda payload, m: seen.append((payload, m))))
    ((payload, passed_model),) = seen
    assert passed_model is model
    assert payload == server.requests[0].json() == build_openai_completions_request(model, ask(), {})
    assert payload["stream"] is True and payload["stream_options"] == {"include_usage": True}


def test_model_and_option_headers_are_sent(server):
    server.add(text_reply("ok"))
    model = openai_model(server, headers={"X-Title": "pi_notebook", "X-Both": "model"})
    run(complete(model, ask(), api_key=KEY, headers={"X-Both": "options"}))
    headers = server.requests[0].headers
    assert headers["x-title"] == "pi_notebook" and headers["x-both"] == "options"


# --- keys ----------------------------------------------------------------------------------------------


def test_ollama_needs_no_key(server, monkeypatch):
    monkeypatch.setenv("OLLAMA_HOST", server.url)
    server.add(text_reply("Hi from llama"))
    final = run(complete(get_model("ollama/llama3.2"), ask()))
    assert final.stop_reason == "stop" and final.content[0].text == "Hi from llama"
    request = server.requests[0]
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == f"Bearer {KEYLESS_PLACEHOLDER}"
    assert "store" not in request.json()  # Ollama's compat flags reached the body


def test_an_openai_compatible_server_needs_no_key(server):
    server.add(text_reply("ok"))
    final = run(complete(get_model("openai-compatible/x", base_url=server.url + "/v1"), ask()))
    assert final.stop_reason == "stop" and final.content[0].text == "ok"


def test_a_missing_openai_key_is_an_error_naming_the_variable(server):
    events, final = run(collect(stream(openai_model(server), ask())))
    assert types(events) == ["error"]
    assert final.stop_reason == "error" and "OPENAI_API_KEY" in final.error_message
    assert server.requests == []


def test_the_environment_key_is_used(server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    server.add(text_reply("ok"))
    run(complete(openai_model(server), ask()))
    assert server.requests[0].headers["authorization"] == f"Bearer {KEY}"


def test_a_key_echoed_by_the_server_is_blanked_and_never_logged(server, caplog):
    caplog.set_level(logging.DEBUG)
    body = {"error": {"message": f"Incorrect API key provided: {KEY}.", "type": "invalid_request_error"}}
    server.add(Reply.json(401, body))
    events, final = run(collect(stream(openai_model(server), ask(), api_key=KEY, max_retries=0)))
    assert final.error_message == "401 Incorrect API key provided: ***."
    assert KEY not in json.dumps([e.to_pi_json() for e in events])
    assert "HTTP Request: POST" in caplog.text  # the SDK's debug log was captured, without the key
    assert KEY not in caplog.text


def test_without_the_sdk_the_error_says_how_to_install_it(server, monkeypatch):
    monkeypatch.setitem(sys.modules, "openai", None)  # makes `import openai` fail
    final = run(complete(openai_model(server), ask(), api_key=KEY))
    assert final.stop_reason == "error" and final.error_message == INSTALL_HINT
    assert "pip install 'pi_notebook[openai]'" in final.error_message


# --- failures ------------------------------------------------------------------------------------------


def test_a_429_is_retried_by_the_sdk(server):
    limited = {"error": {"message": "Rate limit reached", "type": "requests", "code": "rate_limit_exceeded"}}
    server.add(Reply.json(429, limited, {"retry-after-ms": "1"}), text_reply("after the wait"))
    final = run(complete(openai_model(server), ask(), api_key=KEY))
    assert final.stop_reason == "stop" and final.content[0].text == "after the wait"
    assert len(server.requests) == 2
    assert server.requests[0].json() == server.requests[1].json()


def test_a_500_without_retries_is_an_error_with_the_apis_message(server):
    server.add(Reply.json(500, {"error": {"message": "The server had an error processing your request."}}))
    events, final = run(collect(stream(openai_model(server), ask(), api_key=KEY, max_retries=0)))
    assert types(events) == ["error"] and events[0].reason == "error"
    assert final.error_message == "500 The server had an error processing your request."
    assert len(server.requests) == 1


def test_an_error_status_with_a_plain_text_body(server):
    server.add(Reply(502, [b"Bad gateway: upstream down"], {"content-type": "text/plain"}))
    final = run(complete(openai_model(server), ask(), api_key=KEY, max_retries=0))
    assert final.error_message == "502 Bad gateway: upstream down"


def test_an_error_status_without_a_body_reads_as_pis_no_body_message(server):
    # Pi's overflow detection knows this wording (`400 status code (no body)`).
    server.add(Reply(400, [], {"content-type": "application/json"}))
    final = run(complete(openai_model(server), ask(), api_key=KEY, max_retries=0))
    assert final.error_message == "400 status code (no body)"


def test_an_unreachable_server_is_a_connection_error():
    with ScriptedServer() as gone:
        url = gone.url
    model = get_model("openai-completions/gpt-4o-mini", base_url=url + "/v1")
    final = run(complete(model, ask(), api_key=KEY, max_retries=0))
    assert final.stop_reason == "error" and final.content == []
    assert final.error_message.startswith("Connection error: ")


def test_a_disconnect_mid_stream_is_an_error_keeping_the_partial_text(server):
    chunks = [role(), chunk({"content": "Once upon"}), chunk({"content": " a time"}), chunk({"content": "!"})]
    server.add(Reply(chunks=[*chunks, chunk({}, "stop"), DONE], disconnect_after=3))
    events, final = run(collect(stream(openai_model(server), ask(), api_key=KEY)))
    assert types(events)[-1] == "error" and "text_end" not in types(events)
    assert final.stop_reason == "error" and final.content[0].text == "Once upon a time"
    assert final.error_message.startswith("Connection error")
    assert len(server.requests) == 1  # a started stream is not retried


def test_a_malformed_chunk_is_an_error(server):
    chunks = [role(), chunk({"content": "Hi"}), b"data: {not json\n\n", chunk({}, "stop"), DONE]
    server.add(Reply(chunks=chunks))
    final = run(complete(openai_model(server), ask(), api_key=KEY))
    assert final.stop_reason == "error" and final.content[0].text == "Hi"
    assert final.error_message.startswith("Malformed chunk in the response stream")
    assert "{not json" in final.error_message


def test_an_error_object_inside_the_stream_is_an_error(server):
    error = {
        "error": {
            "message": "Provider returned error",
            "code": 502,
            "metadata": {"raw": "upstream overloaded"},
        }
    }
    server.add(Reply(chunks=[role(), chunk({"content": "Part"}), sse(error), DONE]))
    final = run(complete(openai_model(server), ask(), api_key=KEY))
    assert final.stop_reason == "error" and final.content[0].text == "Part"
    assert final.error_message == "Provider returned error\nupstream overloaded (code 502)"


def test_a_stream_without_finish_reason_is_an_error(server):
    server.add(Reply(chunks=[role(), chunk({"content": "Trunc"}), DONE]))
    final = run(complete(openai_model(server), ask(), api_key=KEY))
    assert final.stop_reason == "error" and final.content[0].text == "Trunc"
    assert "finish_reason" in final.error_message


@pytest.mark.parametrize(
    ("finish", "stop_reason", "error_message"),
    [
        ("stop", "stop", None),
        ("end", "stop", None),
        ("length", "length", None),
        ("tool_calls", "toolUse", None),
        ("function_call", "toolUse", None),
        ("content_filter", "error", "Provider finish_reason: content_filter"),
        ("network_error", "error", "Provider finish_reason: network_error"),
    ],
)
def test_finish_reasons_map_to_stop_reasons(server, finish, stop_reason, error_message):
    server.add(Reply(chunks=[chunk({"content": "x"}), chunk({}, finish), usage_chunk(), DONE]))
    events, final = run(collect(stream(openai_model(server), ask(), api_key=KEY)))
    assert (final.stop_reason, final.error_message) == (stop_reason, error_message)
    assert events[-1].type == ("error" if stop_reason == "error" else "done")
    assert events[-1].reason == stop_reason
    assert final.content[0].text == "x" and final.usage.input == 20  # content and usage are kept


def test_finish_reason_null_on_every_chunk_until_the_last(server):
    chunks = [chunk({"content": "a"}, None), chunk({"content": "b"}, None), chunk({}, "stop"), DONE]
    server.add(Reply(chunks=chunks))
    final = run(complete(openai_model(server), ask(), api_key=KEY))
    assert final.stop_reason == "stop" and final.content[0].text == "ab"


def test_abort_mid_stream_ends_promptly_keeping_the_partial(server):
    chunks = [role(), *(chunk({"content": f"word{i} "}) for i in range(20)), chunk({}, "stop"), DONE]
    server.add(Reply(chunks=chunks, chunk_delay=0.2))
    controller = AbortController()

    async def main():
        s = stream(openai_model(server), ask(), api_key=KEY, signal=controller.signal)
        events = []
        async for event in s:
            events.append(event)
            if event.type == "text_delta":
                controller.abort()
                aborted_at = time.monotonic()
        return events, await s.result(), time.monotonic() - aborted_at

    events, final, elapsed = run(main())
    assert elapsed < 2.0  # the server would need 4 more seconds; loose for a busy 2-core machine
    assert events[-1].type == "error" and events[-1].reason == "aborted"
    assert final.stop_reason == "aborted" and final.error_message == "Request was aborted"
    assert final.content[0].text == "word0 "
