"""The openai-responses transport, driven through the real ``openai`` SDK against a scripted local server.

The server speaks the Responses wire format (``tests/ai/responses_sse.py``): ``event: <type>`` +
``data: {...}`` semantic events from ``response.created`` to ``response.completed``. Everything goes through
``stream()`` / ``complete()``, so failures must arrive as data, never as exceptions. No network, no real key.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
import time
import types as types_module

import openai  # noqa: F401 - the [openai] extra (in [dev]): missing is a failure, not a skip
import pytest

from pi_notebook.ai import Context, Tool, UserMessage
from pi_notebook.ai.abort import AbortController
from pi_notebook.ai.models import calculate_cost, get_model
from pi_notebook.ai.options import StreamOptions
from pi_notebook.ai.providers.openai_responses import INSTALL_HINT, UPGRADE_HINT, map_status
from pi_notebook.ai.providers.openai_responses_convert import build_openai_responses_request
from pi_notebook.ai.streaming import complete, stream
from pi_notebook.ai.types import AssistantMessage, ToolCall, ToolResultMessage, Usage

from . import responses_sse as wire
from .scripted_server import Reply, ScriptedServer, sse

KEY = "fake-openai-key-0009"
WEATHER = Tool(
    name="get_weather",
    description="Weather for a place.",
    parameters={"type": "object", "properties": {"location": {"type": "string"}}, "required": ["location"]},
)


@pytest.fixture(autouse=True)
def hermetic_env(monkeypatch):
    # The SDK and the key lookup read these; a developer's own settings must not leak into the tests.
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID", "PI_CACHE_RETENTION"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="module")
def shared_server():
    # One server for the module: stopping one costs half a second (its poll interval).
    with ScriptedServer() as s:
        # The abort and disconnect tests hang up mid-reply on purpose; the broken pipe is expected.
        s._httpd.handle_error = lambda request, address: None
        yield s


@pytest.fixture
def server(shared_server):
    shared_server.replies.clear()
    shared_server.requests.clear()
    return shared_server


def model_for(server, spec="openai/gpt-5-mini", **kw):
    return get_model(spec, base_url=server.url + "/v1", **kw)


def ask(text="Say hello.", **kw):
    return Context(system_prompt="Be brief.", messages=[UserMessage(content=text, timestamp=1)], **kw)


def run(coro):
    return asyncio.run(coro)


async def collect(s):
    return [e async for e in s], await s.result()


def go(server, context=None, model=None, **options):
    options.setdefault("api_key", KEY)
    return run(collect(stream(model or model_for(server), context or ask(), **options)))


def types(events):
    return [e.type for e in events]


def assert_no_key(events, key=KEY):
    assert key not in json.dumps([e.to_pi_json() for e in events])


# --- text, reasoning, tool calls -------------------------------------------------------------------------


def test_plain_text_streams_pis_events_with_usage_cached_tokens_and_cost(server):
    chunks = wire.response(wire.message("msg_1", 0, "Hel", "lo", "!"), usage=wire.usage(120, 7, cached=100))
    server.add(Reply(chunks=chunks))
    model = model_for(server)
    events, final = go(server, model=model)

    assert types(events) == ["start", "text_start", "text_delta", "text_delta", "text_delta", "text_end", "done"]
    assert [e.partial.content[0].text for e in events if e.type == "text_delta"] == ["Hel", "Hello", "Hello!"]
    assert events[5].content == "Hello!" and events[-1].reason == "stop" and events[-1].message is final
    assert final.to_pi_json()["content"] == [
        {"type": "text", "text": "Hello!", "textSignature": '{"v":1,"id":"msg_1"}'},
    ]
    assert (final.api, final.provider, final.model) == ("openai-responses", "openai", "gpt-5-mini")
    # Pi's reading: cached tokens are part of input_tokens.
    expected = Usage(input=20, output=7, cache_read=100, cache_write=0, total_tokens=127)
    calculate_cost(model, expected)
    assert final.usage == expected and final.usage.cost.cache_read > 0
    request = server.requests[0]
    assert request.path == "/v1/responses" and request.headers["authorization"] == f"Bearer {KEY}"


def test_complete_returns_the_final_message(server):
    server.add(Reply(chunks=wire.response(wire.message("msg_1", 0, "4"))))
    final = run(complete(model_for(server), ask("2+2?"), StreamOptions(api_key=KEY)))
    assert isinstance(final, AssistantMessage) and final.content[0].text == "4"


def test_reasoning_summary_is_a_thinking_block_signed_with_the_encrypted_item(server):
    thinking = wire.reasoning("rs_1", 0, [["Two plus ", "two."], ["It is ", "four."]])
    server.add(Reply(chunks=wire.response(thinking, wire.message("msg_2", 1, "4"), usage=wire.usage(reasoning=3))))
    events, final = go(server, reasoning="low")

    assert types(events) == [
        "start", "thinking_start", "thinking_delta", "thinking_delta", "thinking_delta", "thinking_delta",
        "thinking_delta", "thinking_end", "text_start", "text_delta", "text_end", "done",
    ]  # fmt: skip
    deltas = [e.delta for e in events if e.type == "thinking_delta"]
    # Deviation 3: the separator streams between the parts, so the deltas add up to the final thinking.
    assert deltas == ["Two plus ", "two.", "\n\n", "It is ", "four."]
    assert "".join(deltas) == events[7].content == final.content[0].thinking == "Two plus two.\n\nIt is four."
    item = json.loads(final.content[0].thinking_signature)
    assert item == {
        "id": "rs_1",
        "type": "reasoning",
        "summary": [
            {"type": "summary_text", "text": "Two plus two."},
            {"type": "summary_text", "text": "It is four."},
        ],
        "encrypted_content": wire.ENCRYPTED,
    }
    assert final.content[1].text == "4"
    body = server.requests[0].json()
    assert body["reasoning"] == {"effort": "low", "summary": "auto"}
    assert body["include"] == ["reasoning.encrypted_content"]


def test_the_reasoning_item_goes_back_next_turn_to_the_same_model_only(server):
    thinking = wire.reasoning("rs_1", 0, [["Check the weather."]])
    call = wire.function_call("fc_1", 1, "call_1", "get_weather", '{"location":"Paris"}')
    server.add(Reply(chunks=wire.response(thinking, call)))
    context = ask("Weather in Paris?", tools=[WEATHER])
    _, first = go(server, context, reasoning="low")
    assert first.stop_reason == "toolUse" and first.content[1].id == "call_1|fc_1"

    result = ToolResultMessage(
        tool_call_id="call_1|fc_1", tool_name="get_weather", content=[{"type": "text", "text": "Sunny"}]
    )
    context.messages += [first, result]
    server.add(Reply(chunks=wire.response(wire.message("msg_2", 0, "Sunny."))))
    go(server, context, reasoning="low")
    sent = server.requests[1].json()["input"]
    assert sent[2] == json.loads(first.content[0].thinking_signature)  # verbatim, encrypted content included
    assert sent[2]["encrypted_content"] == wire.ENCRYPTED
    assert sent[3] == {
        "type": "function_call",
        "id": "fc_1",
        "call_id": "call_1",
        "name": "get_weather",
        "arguments": '{"location":"Paris"}',
    }
    assert sent[4] == {"type": "function_call_output", "call_id": "call_1", "output": "Sunny"}

    # Another model (gpt-5 instead of gpt-5-mini) cannot read it: the summary goes as text, the fc_ id is left out.
    server.add(Reply(chunks=wire.response(wire.message("msg_3", 0, "ok"))))
    go(server, context, model_for(server, "openai/gpt-5"), reasoning="low")
    sent = server.requests[2].json()["input"]
    assert not [item for item in sent if item.get("type") == "reasoning"]
    assert sent[2]["content"][0]["text"] == "Check the weather." and sent[2]["type"] == "message"
    assert "id" not in sent[3] and sent[3]["call_id"] == "call_1"


def test_two_parallel_tool_calls_have_parsed_arguments_on_every_delta(server):
    args_a = json.dumps({"location": "Paris", "unit": "celsius"})
    args_b = json.dumps({"location": "Tokyo"})
    split = [args_a[i : i + 4] for i in range(0, len(args_a), 4)]
    chunks = wire.response(
        wire.message("msg_1", 0, "Checking both."),
        wire.function_call("fc_A", 1, "call_A", "get_weather", *split),
        wire.function_call("fc_B", 2, "call_B", "get_weather", "", args_b[:5], args_b[5:]),
    )
    server.add(Reply(chunks=chunks))
    events, final = go(server, ask(tools=[WEATHER]))

    deltas = [e for e in events if e.type == "toolcall_delta"]
    assert [e.content_index for e in deltas] == [1] * len(split) + [2, 2]
    for event in deltas:  # the arguments are an object on every delta, never a string
        assert isinstance(event.partial.content[event.content_index].arguments, dict)
    assert deltas[3].partial.content[1].arguments == {"location": "Pa"}  # parsed while it streams
    assert "".join(e.delta for e in deltas if e.content_index == 1) == args_a
    ends = [e.tool_call for e in events if e.type == "toolcall_end"]
    assert [(c.id, c.name, c.arguments) for c in ends] == [
        ("call_A|fc_A", "get_weather", {"location": "Paris", "unit": "celsius"}),
        ("call_B|fc_B", "get_weather", {"location": "Tokyo"}),
    ]
    assert final.content[1:] == ends
    assert final.stop_reason == "toolUse" and events[-1].reason == "toolUse"


def test_interleaved_items_reach_their_own_blocks(server):
    events = wire.start() + wire.interleave(
        wire.function_call("fc_A", 0, "call_A", "get_weather", '{"location":', '"Paris"}'),
        wire.function_call("fc_B", 1, "call_B", "get_weather", '{"location":', '"Oslo"}'),
    )
    items = [
        wire.function_call("fc_A", 0, "call_A", "get_weather", '{"location":"Paris"}'),
        wire.function_call("fc_B", 1, "call_B", "get_weather", '{"location":"Oslo"}'),
    ]
    server.add(Reply(chunks=wire.encode(events + wire.completed(items, usage=wire.usage()))))
    final = run(complete(model_for(server), ask(tools=[WEATHER]), api_key=KEY))
    assert [(c.id, c.arguments) for c in final.content] == [
        ("call_A|fc_A", {"location": "Paris"}),
        ("call_B|fc_B", {"location": "Oslo"}),
    ]


def test_arguments_sent_only_when_the_item_is_done_still_arrive_as_a_delta(server):
    call = wire.function_call("fc_1", 0, "call_1", "get_weather", '{"location":"Rome"}')
    call = [e for e in call if e["type"] != "response.function_call_arguments.delta"]
    server.add(Reply(chunks=wire.response(call)))
    events, final = go(server, ask(tools=[WEATHER]))
    assert [e.delta for e in events if e.type == "toolcall_delta"] == ['{"location":"Rome"}']
    assert final.content[0].arguments == {"location": "Rome"}


def test_refusal_and_phase_and_built_in_tool_items(server):
    chunks = wire.response(
        wire.web_search("ws_1", 0),
        wire.message("msg_1", 1, "Working on it.", phase="commentary"),
        wire.message("msg_2", 2, "I can't ", "help with that.", refusal=True),
    )
    server.add(Reply(chunks=chunks))
    final = run(complete(model_for(server), ask(), api_key=KEY))
    assert [b.to_pi_json() for b in final.content] == [
        {"type": "text", "text": "Working on it.", "textSignature": '{"v":1,"id":"msg_1","phase":"commentary"}'},
        {"type": "text", "text": "I can't help with that.", "textSignature": '{"v":1,"id":"msg_2"}'},
    ]


def test_service_tier_prices_the_usage(server):
    server.add(Reply(chunks=wire.response(wire.message("m", 0, "x"), usage=wire.usage(1000, 100), service_tier="flex")))
    model = model_for(server)
    _, final = go(server, model=model)
    standard = calculate_cost(model, Usage(input=1000, output=100, total_tokens=1100))
    assert final.usage.cost.total == pytest.approx(standard.total / 2)


# --- the request -----------------------------------------------------------------------------------------


def test_the_body_is_the_built_request_and_the_key_is_only_in_the_authorization_header(server):
    server.add(Reply(chunks=wire.response(wire.message("msg_1", 0, "ok"))))
    model = model_for(server, headers={"X-Title": "pi_notebook", "X-Both": "model"})
    options = StreamOptions(api_key=KEY, reasoning="high", temperature=0.25, max_tokens=321, session_id="sess-42")
    context = ask(tools=[WEATHER])
    _, final = go(server, context, model, **options.model_dump(exclude_none=True), headers={"X-Both": "options"})
    assert final.stop_reason == "stop"

    (request,) = server.requests
    assert request.json() == build_openai_responses_request(model, context, options)
    body = request.json()
    assert body["prompt_cache_key"] == "sess-42" and body["store"] is False and body["stream"] is True
    assert (body["max_output_tokens"], body["temperature"]) == (321, 0.25)
    assert request.headers["x-title"] == "pi_notebook" and request.headers["x-both"] == "options"
    others = {k: v for k, v in request.headers.items() if k != "authorization"}
    assert KEY not in json.dumps(others) and KEY.encode() not in request.body
    assert KEY not in json.dumps(final.to_pi_json())


def test_prompt_cache_key_is_the_session_id_unless_caching_is_off(server):
    server.add(*(Reply(chunks=wire.response(wire.message("m", 0, "ok"))) for _ in range(2)))
    go(server, session_id="session-0f1e2d3c")
    go(server, session_id="session-0f1e2d3c", cache_retention="none")
    first, second = (r.json() for r in server.requests)
    assert first["prompt_cache_key"] == "session-0f1e2d3c" and "prompt_cache_retention" not in first
    assert "prompt_cache_key" not in second


def test_on_payload_sees_the_exact_body_and_may_replace_it(server):
    server.add(*(Reply(chunks=wire.response(wire.message("m", 0, "ok"))) for _ in range(2)))
    seen = []
    model = model_for(server)
    go(server, model=model, on_payload=lambda payload, m: seen.append((json.loads(json.dumps(payload)), m)))
    ((payload, passed),) = seen
    assert passed is model and payload == server.requests[0].json()

    async def replace(payload, m):  # an async hook returning a new body, as Pi allows
        return {**payload, "metadata": {"user": "u-1"}}

    go(server, on_payload=replace)
    assert server.requests[1].json()["metadata"] == {"user": "u-1"}


def test_openai_completions_stays_selectable(server):
    model = model_for(server, "openai-completions/gpt-5-mini")
    assert (model.api, model.provider, model.id) == ("openai-completions", "openai", "gpt-5-mini")
    assert model_for(server, api="openai-completions").api == "openai-completions"
    assert model_for(server).api == "openai-responses"


# --- keys --------------------------------------------------------------------------------------------------


def test_a_missing_key_is_an_error_naming_the_variable(server):
    events, final = run(collect(stream(model_for(server), ask())))
    assert types(events) == ["error"]
    assert final.stop_reason == "error" and "OPENAI_API_KEY" in final.error_message
    assert server.requests == []


def test_the_environment_key_is_used(server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    server.add(Reply(chunks=wire.response(wire.message("m", 0, "ok"))))
    run(complete(model_for(server), ask()))
    assert server.requests[0].headers["authorization"] == f"Bearer {KEY}"


def test_a_key_echoed_by_the_server_is_blanked_and_never_logged(server, caplog):
    caplog.set_level(logging.DEBUG)
    server.add(Reply.json(401, wire.error_body(f"Incorrect API key provided: {KEY}.", code="invalid_api_key")))
    events, final = go(server, max_retries=0)
    assert final.stop_reason == "error"
    assert final.error_message == "401 Incorrect API key provided: ***."
    assert_no_key(events)
    assert "HTTP Request: POST" in caplog.text and KEY not in caplog.text


def test_without_the_sdk_the_error_says_how_to_install_it(server, monkeypatch):
    monkeypatch.setitem(sys.modules, "openai", None)  # makes `import openai` fail
    final = run(complete(model_for(server), ask(), api_key=KEY))
    assert final.stop_reason == "error" and final.error_message == INSTALL_HINT
    assert server.requests == []


def test_an_sdk_older_than_the_responses_api_says_what_to_do(server, monkeypatch):
    old = types_module.SimpleNamespace(__version__="1.50.0", AsyncOpenAI=type("AsyncOpenAI", (), {}))
    monkeypatch.setitem(sys.modules, "openai", old)
    final = run(complete(model_for(server), ask(), api_key=KEY))
    assert final.stop_reason == "error" and final.error_message == UPGRADE_HINT.format(version="1.50.0")
    assert "openai-completions/<model id>" in final.error_message and server.requests == []


# --- failures ----------------------------------------------------------------------------------------------


def test_a_429_then_a_500_are_retried_by_the_sdk_then_success(server):
    limited = wire.error_body("Rate limit reached for gpt-5-mini", "requests", "rate_limit_exceeded")
    server.add(
        Reply.json(429, limited, {"retry-after-ms": "1"}),
        Reply.json(500, wire.error_body("The server had an error.", "server_error"), {"retry-after-ms": "1"}),
        Reply(chunks=wire.response(wire.message("m", 0, "after the wait"))),
    )
    events, final = go(server)
    assert final.stop_reason == "stop" and final.content[0].text == "after the wait"
    assert len(server.requests) == 3 and len({r.body for r in server.requests}) == 1
    assert types(events).count("start") == 1


def test_a_500_without_retries_is_an_error_with_the_apis_message(server):
    server.add(Reply.json(500, wire.error_body("The server had an error processing your request.", "server_error")))
    events, final = go(server, max_retries=0)
    assert types(events) == ["error"] and events[0].reason == "error"
    assert final.error_message == "500 The server had an error processing your request."
    assert (final.api, final.model, final.content) == ("openai-responses", "gpt-5-mini", [])


def test_an_error_status_without_a_body_reads_as_pis_no_body_message(server):
    server.add(Reply(400, [], {"content-type": "application/json"}))
    final = run(complete(model_for(server), ask(), api_key=KEY, max_retries=0))
    assert final.error_message == "400 status code (no body)"  # Pi's overflow check knows this wording


def test_a_disconnect_mid_stream_is_an_error_keeping_the_partial_text(server):
    chunks = wire.response(wire.message("msg_1", 0, "Once upon", " a time", "!"))
    server.add(Reply(chunks=chunks, disconnect_after=6))  # created, in_progress, added, part, two deltas
    events, final = go(server)
    assert types(events) == ["start", "text_start", "text_delta", "text_delta", "error"]
    assert final.stop_reason == "error" and final.content[0].text == "Once upon a time"
    assert final.error_message.startswith("Connection error")
    assert len(server.requests) == 1  # a started stream is not retried
    assert_no_key(events)


def test_a_stream_ending_without_response_completed_is_an_error(server):
    # Deviation 2: Pi reports such an answer as complete (stop, no usage).
    chunks = wire.response(wire.message("msg_1", 0, "Trunc"))[:-1]
    server.add(Reply(chunks=chunks))
    final = run(complete(model_for(server), ask(), api_key=KEY))
    assert final.stop_reason == "error" and final.content[0].text == "Trunc"
    assert "response.completed" in final.error_message


def test_a_malformed_event_is_an_error(server):
    chunks = wire.response(wire.message("msg_1", 0, "Hi"))
    server.add(Reply(chunks=[*chunks[:5], b"event: response.output_text.delta\ndata: {not json\n\n", *chunks[5:]]))
    final = run(complete(model_for(server), ask(), api_key=KEY))
    assert final.stop_reason == "error" and final.content[0].text == "Hi"
    assert (
        final.error_message.startswith("Malformed event in the response stream") and "{not json" in final.error_message
    )


def test_an_event_missing_its_fields_does_not_break_the_stream(server):
    chunks = wire.response(wire.message("msg_1", 0, "Hi"))
    odd = wire.encode([{"type": "response.output_text.delta"}, {"type": "response.output_item.done"}])
    server.add(Reply(chunks=[*chunks[:5], *odd, *chunks[5:]]))
    final = run(complete(model_for(server), ask(), api_key=KEY))
    assert final.stop_reason == "stop" and final.content[0].text == "Hi"


def test_an_error_event_mid_stream_keeps_the_partial(server):
    chunks = wire.response(wire.message("msg_1", 0, "Half", " way"))
    server.add(Reply(chunks=[*chunks[:5], *wire.error_event("server_error", "The model crashed.")]))
    _, final = go(server)
    assert final.stop_reason == "error" and final.content[0].text == "Half"
    assert final.error_message == "Error Code server_error: The model crashed."


def test_an_error_object_in_the_stream_is_an_error(server):
    # Gateways (OpenRouter, LiteLLM …) send `{"error": {...}}` as an event; the SDK raises it.
    chunks = wire.response(wire.message("msg_1", 0, "Part", "ial"))
    error = sse({"error": {"message": "Upstream overloaded", "code": 529, "metadata": {}}})
    server.add(Reply(chunks=[*chunks[:5], error]))
    _, final = go(server)
    assert final.stop_reason == "error" and final.content[0].text == "Part"
    assert final.error_message == "Upstream overloaded (code 529)"


def test_response_failed_is_an_error_with_the_apis_code_and_message(server):
    error = {"code": "rate_limit_exceeded", "message": "Too many tokens per minute."}
    message = wire.message("msg_1", 0, "Part")
    events = wire.start() + message[:3] + wire.completed([message], "failed", error=error)
    server.add(Reply(chunks=wire.encode(events)))
    _, final = go(server)
    assert final.stop_reason == "error" and final.content[0].text == "Part"
    assert final.error_message == "rate_limit_exceeded: Too many tokens per minute."


def test_response_incomplete_is_length_with_its_usage(server):
    # Deviation 1: Pi ignores response.incomplete, so such an answer ends as `stop` without usage.
    details = {"reason": "max_output_tokens"}
    chunks = wire.response(
        wire.message("msg_1", 0, "Cut"), status="incomplete", incomplete_details=details, usage=wire.usage(50, 16)
    )
    server.add(Reply(chunks=chunks))
    events, final = go(server)
    assert final.stop_reason == "length" and events[-1].type == "done" and events[-1].reason == "length"
    assert (final.usage.input, final.usage.output, final.content[0].text) == (50, 16, "Cut")


def test_response_incomplete_for_the_content_filter_is_an_error(server):
    chunks = wire.response(
        wire.message("msg_1", 0, "Cut"), status="incomplete", incomplete_details={"reason": "content_filter"}
    )
    server.add(Reply(chunks=chunks))
    _, final = go(server)
    assert (final.stop_reason, final.error_message) == ("error", "incomplete: content_filter")


@pytest.mark.parametrize(
    ("status", "stop_reason"),
    [(None, "stop"), ("completed", "stop"), ("incomplete", "length"), ("failed", "error"), ("cancelled", "error"),
     ("in_progress", "stop"), ("queued", "stop")],
)  # fmt: skip
def test_map_status(status, stop_reason):
    assert map_status(status) == stop_reason


def test_a_completed_event_with_a_failed_status_is_an_error(server):
    error = {"code": "server_error", "message": "Boom."}
    server.add(Reply(chunks=wire.response(wire.message("m", 0, "x"), status="cancelled", error=error)))
    events, final = go(server)
    assert events[-1].type == "error" and (final.stop_reason, final.error_message) == ("error", "server_error: Boom.")


def test_abort_mid_stream_ends_promptly_keeping_the_partial(server):
    chunks = wire.response(wire.message("msg_1", 0, *(f"word{i} " for i in range(20))))
    server.add(Reply(chunks=chunks, chunk_delay=0.2))
    controller = AbortController()

    async def main():
        s = stream(model_for(server), ask(), api_key=KEY, signal=controller.signal)
        events, aborted_at = [], None
        async for event in s:
            events.append(event)
            if event.type == "text_delta" and aborted_at is None:
                controller.abort()
                aborted_at = time.monotonic()
        return events, await s.result(), time.monotonic() - aborted_at

    events, final, elapsed = run(main())
    assert elapsed < 2.0  # the server would need 4 more seconds; loose for a busy 2-core machine
    assert events[-1].type == "error" and events[-1].reason == "aborted"
    assert final.stop_reason == "aborted" and final.error_message == "Request was aborted"
    assert final.content[0].text == "word0 "


def test_an_unreachable_server_is_a_connection_error():
    with ScriptedServer() as gone:
        url = gone.url
    final = run(complete(get_model("openai/gpt-5-mini", base_url=url + "/v1"), ask(), api_key=KEY, max_retries=0))
    assert final.stop_reason == "error" and final.content == []
    assert final.error_message.startswith("Connection error")


def test_tool_call_ids_round_trip_as_call_id_and_item_id(server):
    """A streamed call's id keeps both halves; its result answers the call id alone."""
    call = ToolCall(id="call_9|fc_9", name="get_weather", arguments={"location": "Lima"})
    earlier = AssistantMessage(
        content=[call], api="openai-responses", provider="openai", model="gpt-5-mini", stop_reason="toolUse"
    )
    result = ToolResultMessage(tool_call_id=call.id, tool_name="get_weather", content=[])
    context = Context(messages=[UserMessage(content="q"), earlier, result], tools=[WEATHER])
    server.add(Reply(chunks=wire.response(wire.message("m", 0, "ok"))))
    go(server, context)
    sent = server.requests[0].json()["input"]
    assert sent[1]["id"] == "fc_9" and sent[1]["call_id"] == "call_9"
    assert sent[2] == {"type": "function_call_output", "call_id": "call_9", "output": "(no output)"}
