"""The google-generative-ai transport: the real ``google-genai`` SDK against a scripted server on 127.0.0.1.

The server speaks Gemini's ``streamGenerateContent?alt=sse`` wire format (``tests/ai/google_wire.py``); everything
is driven through ``stream()`` / ``complete()``, so failures must arrive as data, never as exceptions. The REST body
the SDK sends is checked against the params our builder made (Pi's ``onPayload`` shape), for every public fixture.
"""

from __future__ import annotations

import asyncio
import base64
import json
import sys
import time
from pathlib import Path

import google.genai  # noqa: F401 - the [google] extra (in [dev]): missing is a failure, not a skip
import pytest

from pi_notebook.ai import catalogue as catalogue_module
from pi_notebook.ai.abort import AbortController
from pi_notebook.ai.models import calculate_cost, get_model, list_models, model_note
from pi_notebook.ai.options import StreamOptions
from pi_notebook.ai.providers.google import api_version_for, map_finish_reason
from pi_notebook.ai.providers.google_convert import build_google_request
from pi_notebook.ai.streaming import complete, stream
from pi_notebook.ai.types import (
    AssistantMessage,
    Context,
    Model,
    TextContent,
    Tool,
    ToolResultMessage,
    Usage,
    UserMessage,
)

from . import google_wire as wire
from .scripted_server import Reply, ScriptedServer

KEY = "fake-gemini-key-for-tests-0000"
SIGNATURE = "Cq/7o7Gi+Bx0EjLd"  # standard base64, with the two characters base64url spells differently
WEATHER = Tool(
    name="get_weather",
    description="Weather for a place.",
    parameters={"type": "object", "properties": {"location": {"type": "string"}}, "required": ["location"]},
)
FIXTURES = Path(__file__).parent.parent / "fixtures" / "pi"


@pytest.fixture(autouse=True)
def clean_env(monkeypatch):
    # The developer's own credentials or SDK settings must not leak into (or change) these tests.
    for name in (
        "GEMINI_API_KEY",
        "GOOGLE_API_KEY",
        "GOOGLE_GEMINI_BASE_URL",
        "GOOGLE_GENAI_USE_VERTEXAI",
        "GOOGLE_GENAI_USE_ENTERPRISE",
        "GOOGLE_GENAI_API_VERSION",
        "GOOGLE_GENAI_HTTP_CLIENT",
        "GOOGLE_CLOUD_PROJECT",
        "GOOGLE_CLOUD_LOCATION",
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


def model_for(server, model_id="gemini-2.5-flash", **overrides):
    return get_model(f"google/{model_id}", base_url=server.url + "/v1beta", **overrides)


def ask(text="Hi", **kw):
    return Context(system_prompt="Be brief.", messages=[UserMessage(content=text, timestamp=1)], **kw)


async def _collect(s):
    return [e async for e in s], await s.result()


def run(server, context=None, model=None, **options):
    options.setdefault("api_key", KEY)
    options.setdefault("retry_base_delay_ms", 10)
    return asyncio.run(_collect(stream(model or model_for(server), context or ask(), **options)))


def assert_no_key(events, key=KEY):
    for event in events:
        assert key not in json.dumps(event.to_pi_json())


def types(events):
    return [e.type for e in events]


def sent(server, index=0):
    """The REST body the SDK sent, in google_wire's canonical form."""
    return wire.canonical(server.requests[index].json())


# --- responses ---------------------------------------------------------------------------------------


def test_plain_text_streams_pis_events_and_a_final_message_with_usage_and_cost(server):
    server.add(Reply(chunks=wire.response([wire.text("Hello")], [wire.text(" there")], prompt=25, candidates=15)))
    model = model_for(server)
    events, final = run(server, model=model)
    assert types(events) == ["start", "text_start", "text_delta", "text_delta", "text_end", "done"]
    assert [e.delta for e in events if e.type == "text_delta"] == ["Hello", " there"]
    assert all(e.content_index == 0 for e in events[1:-1])
    assert events[4].content == "Hello there"
    assert events[-1].reason == "stop" and events[-1].message is final

    expected_usage = Usage(input=25, output=15, total_tokens=40)
    calculate_cost(model, expected_usage)
    assert final.usage == expected_usage and final.usage.cost.total > 0
    pi = final.to_pi_json()
    del pi["timestamp"]
    assert pi == {
        "role": "assistant",
        "content": [{"type": "text", "text": "Hello there"}],
        "api": "google-generative-ai",
        "provider": "google",
        "model": "gemini-2.5-flash",
        "usage": expected_usage.to_pi_json(),
        "stopReason": "stop",
    }
    assert_no_key(events)


def test_thought_summaries_keep_their_signatures_as_standard_base64(server):
    chunks = wire.response(
        [wire.thought("**Planning**\n", SIGNATURE)],
        [wire.thought("Two plus two.")],  # later deltas of the block carry no signature: the first is kept
        [wire.text("It is 4.", "CqKMMkMv")],
        thoughts=7,
    )
    server.add(Reply(chunks=chunks))
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
    assert events[4].content == "**Planning**\nTwo plus two." and events[5].content_index == 1
    assert [b.to_pi_json() for b in final.content] == [
        {"type": "thinking", "thinking": "**Planning**\nTwo plus two.", "thinkingSignature": SIGNATURE},
        {"type": "text", "text": "It is 4.", "textSignature": "CqKMMkMv"},
    ]
    assert final.usage.output == 5 + 7  # thoughts are output
    assert sent(server)["generationConfig"]["thinkingConfig"] == {"includeThoughts": True, "thinkingBudget": 2048}


def test_parallel_function_calls_then_their_responses_replay_with_signatures(server):
    calls = [
        wire.call("get_weather", {"location": "Paris"}, SIGNATURE),
        wire.call("get_weather", {"location": "Tokyo", "days": [1, 2.5, None]}),
    ]
    server.add(Reply(chunks=wire.response([wire.text("Checking both.")], calls)))
    model = model_for(server)
    events, final = run(server, ask(tools=[WEATHER]), model)
    assert types(events) == [
        "start",
        "text_start",
        "text_delta",
        "text_end",
        *["toolcall_start", "toolcall_delta", "toolcall_end"] * 2,
        "done",
    ]
    deltas = [e.delta for e in events if e.type == "toolcall_delta"]
    assert deltas == ['{"location":"Paris"}', '{"location":"Tokyo","days":[1,2.5,null]}']  # JSON.stringify
    first, second = final.content[1], final.content[2]
    assert (first.name, first.arguments, first.thought_signature) == ("get_weather", {"location": "Paris"}, SIGNATURE)
    assert second.thought_signature is None and second.arguments == {"location": "Tokyo", "days": [1, 2.5, None]}
    assert first.id.startswith("get_weather_") and first.id != second.id  # Pi's <name>_<ms>_<n>
    assert [e.tool_call.id for e in events if e.type == "toolcall_end"] == [first.id, second.id]
    assert final.stop_reason == "toolUse" and events[-1].reason == "toolUse"

    # The next turn sends the calls back with their signature, and both responses in one user turn.
    server.add(Reply(chunks=wire.response([wire.text("Sunny in both.")])))
    results = [
        ToolResultMessage(tool_call_id=b.id, tool_name=b.name, content=[TextContent(text=text)], timestamp=2)
        for b, text in ((first, "18°C"), (second, "25°C"))
    ]
    history = Context(messages=[UserMessage(content="Weather?", timestamp=1), final, *results], tools=[WEATHER])
    _, answer = run(server, history, model)
    assert answer.content[0].text == "Sunny in both."
    body = sent(server, 1)
    assert body["contents"][1] == {
        "role": "model",
        "parts": [
            {"text": "Checking both."},
            {
                "functionCall": {"name": "get_weather", "args": {"location": "Paris"}},
                "thoughtSignature": wire._bytes(SIGNATURE),
            },
            {"functionCall": {"name": "get_weather", "args": {"location": "Tokyo", "days": [1, 2.5, None]}}},
        ],
    }
    assert body["contents"][2] == {
        "role": "user",
        "parts": [
            {"functionResponse": {"name": "get_weather", "response": {"output": "18°C"}}},
            {"functionResponse": {"name": "get_weather", "response": {"output": "25°C"}}},
        ],
    }


def test_replayed_thinking_and_text_carry_their_signatures_on_the_wire(server):
    server.add(Reply(chunks=wire.response([wire.thought("plan", SIGNATURE)], [wire.text("answer", "CqKMMkMv")])))
    model = model_for(server, "gemini-3-pro-preview")
    _, first = run(server, model=model, reasoning="high")
    server.add(Reply(chunks=wire.response([wire.text("ok")])))
    history = Context(messages=[UserMessage(content="q", timestamp=1), first, UserMessage(content="more", timestamp=3)])
    run(server, history, model, reasoning="high")
    assert sent(server, 1)["contents"][1]["parts"] == [
        {"thought": True, "text": "plan", "thoughtSignature": base64.b64decode(SIGNATURE)},
        {"text": "answer", "thoughtSignature": base64.b64decode("CqKMMkMv")},
    ]
    assert sent(server, 1)["generationConfig"]["thinkingConfig"] == {"includeThoughts": True, "thinkingLevel": "HIGH"}


def test_a_function_call_with_its_own_id_keeps_it_unless_repeated(server):
    calls = [wire.call("a", {}, call_id="call-1"), wire.call("b", {}, call_id="call-1"), wire.call("c", {})]
    server.add(Reply(chunks=wire.response(calls)))
    _, final = run(server, ask(tools=[WEATHER]))
    assert final.content[0].id == "call-1"
    assert final.content[1].id.startswith("b_") and final.content[2].id.startswith("c_")
    assert final.content[0].arguments == {}


def test_images_reach_the_wire_as_inline_data(server):
    png = base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(range(200))).decode()  # has + and /
    server.add(Reply(chunks=wire.response([wire.text("A cat.")])), Reply(chunks=wire.response([wire.text("ok")])))
    context = Context(
        messages=[
            {
                "role": "user",
                "content": [{"type": "text", "text": "What?"}, {"type": "image", "data": png, "mimeType": "image/png"}],
            }
        ]
    )
    model = model_for(server)
    run(server, context, model)
    assert sent(server)["contents"][0]["parts"][1] == {
        "inlineData": {"mimeType": "image/png", "data": base64.b64decode(png)}
    }

    call = {"type": "toolCall", "id": "s1", "name": "shot", "arguments": {}}
    turn = AssistantMessage(content=[call], api=model.api, provider="google", model=model.id, stop_reason="toolUse")
    shot = ToolResultMessage(
        tool_call_id="s1", tool_name="shot", content=[{"type": "image", "data": png, "mimeType": "image/png"}]
    )
    run(server, Context(messages=[UserMessage(content="Shoot."), turn, shot]), model)
    contents = sent(server, 1)["contents"]
    assert contents[2] == {
        "role": "user",
        "parts": [{"functionResponse": {"name": "shot", "response": {"output": "(see attached image)"}}}],
    }
    assert contents[3]["parts"][1]["inlineData"]["data"] == base64.b64decode(png)


def test_cached_tokens_are_not_counted_twice(server):
    server.add(Reply(chunks=wire.response([wire.text("ok")], prompt=1000, candidates=10, thoughts=20, cached=800)))
    model = model_for(server)
    _, final = run(server, model=model)
    # Deviation from Pi 0.58.3 (input = promptTokenCount, which includes the cached tokens; newer Pi agrees).
    assert (final.usage.input, final.usage.cache_read, final.usage.output) == (200, 800, 30)
    assert final.usage.total_tokens == 1030
    prices = model.cost
    assert final.usage.cost.input == pytest.approx(200 * prices.input / 1e6)
    assert final.usage.cost.cache_read == pytest.approx(800 * prices.cache_read / 1e6)


@pytest.mark.parametrize(
    ("reason", "ours", "error"),
    [
        ("STOP", "stop", None),
        ("MAX_TOKENS", "length", None),
        ("SAFETY", "error", "Gemini stopped with finish reason SAFETY"),
        ("MALFORMED_FUNCTION_CALL", "error", "Gemini stopped with finish reason MALFORMED_FUNCTION_CALL"),
        ("SOMETHING_NEW", "error", "Gemini stopped with finish reason SOMETHING_NEW"),
    ],
)
@pytest.mark.filterwarnings("ignore:SOMETHING_NEW is not a valid FinishReason")
def test_finish_reasons(server, reason, ours, error):
    server.add(Reply(chunks=wire.response([wire.text("Partial")], finish=reason)))
    events, final = run(server)
    assert final.stop_reason == ours and final.error_message == error  # Pi: "An unknown error occurred"
    assert events[-1].type == ("error" if error else "done")
    assert final.content[0].text == "Partial" and events[-2].type == "text_end"


def test_an_error_finish_with_tool_calls_stays_an_error(server):
    server.add(Reply(chunks=wire.response([wire.call("get_weather", {"location": "Rome"})], finish="SAFETY")))
    events, final = run(server, ask(tools=[WEATHER]))
    # Pi reports toolUse here, and the agent would run the calls of a blocked response.
    assert final.stop_reason == "error" and final.error_message == "Gemini stopped with finish reason SAFETY"
    assert final.content[0].arguments == {"location": "Rome"} and events[-1].type == "error"


def test_map_finish_reason():
    assert [map_finish_reason(r) for r in ("STOP", "MAX_TOKENS", "RECITATION", "")] == [
        "stop",
        "length",
        "error",
        "error",
    ]


def test_a_blocked_prompt_is_an_error_that_says_why(server):
    blocked = {"promptFeedback": {"blockReason": "PROHIBITED_CONTENT"}, "usageMetadata": wire.usage(candidates=0)}
    server.add(Reply(chunks=[wire.event(blocked)]))
    _, final = run(server)
    assert final.stop_reason == "error"
    assert final.error_message == "Gemini blocked the prompt: PROHIBITED_CONTENT"  # Pi: an empty "stop"


# --- the request -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "case", [pytest.param(c, id=c["name"]) for c in json.loads((FIXTURES / "google_payload.json").read_text())]
)
def test_the_sdk_sends_the_rest_body_of_our_params(server, case):
    """For every public case: the body on the wire is our params (Pi's onPayload shape) as REST, the path names the
    model, and the key travels in the x-goog-api-key header only."""
    server.add(Reply(chunks=wire.response([wire.text("ok")])))
    raw = case["input"]
    model = Model.model_validate({**raw["model"], "baseUrl": server.url + "/v1beta"})
    context = Context.model_validate({k: raw[k] for k in ("systemPrompt", "messages", "tools") if k in raw})
    options = {
        **StreamOptions.coerce(raw["options"]).model_dump(exclude_none=True, exclude={"api_key"}),
        "api_key": KEY,
    }
    seen = []
    events, final = run(server, context, model, on_payload=lambda params, m: seen.append(params), **options)
    assert final.stop_reason == "stop", final.error_message
    (request,) = server.requests
    assert request.method == "POST" and request.path == wire.stream_path(model.id)
    assert seen == [build_google_request(model, context, StreamOptions.coerce(options))]
    assert sent(server) == wire.rest_view(seen[0])
    assert KEY.encode() not in request.body
    assert {name for name, value in request.headers.items() if KEY in value} == {"x-goog-api-key"}
    assert_no_key(events)


def test_headers_and_a_base_url_without_version(server):
    server.add(Reply(chunks=wire.response([wire.text("ok")])))
    model = get_model("google/gemini-2.5-flash", base_url=server.url, headers={"x-model": "m", "x-both": "model"})
    run(server, model=model, headers={"x-option": "o", "x-both": "options"})
    request = server.requests[0]
    assert request.path == wire.stream_path("gemini-2.5-flash")  # the SDK's version is appended
    assert (request.headers["x-model"], request.headers["x-option"], request.headers["x-both"]) == ("m", "o", "options")
    assert api_version_for("https://generativelanguage.googleapis.com/v1beta") == ""
    assert api_version_for("http://proxy:8080/gemini/v1/") == ""
    assert api_version_for("http://proxy:8080") == api_version_for("") == "v1beta"


def test_on_payload_may_replace_the_params(server):
    server.add(Reply(chunks=wire.response([wire.text("a")])))

    async def replace(params, model):  # an async hook returning a new body, as Pi allows
        return {**params, "config": {**params["config"], "temperature": 0.25, "stopSequences": ["END"]}}

    run(server, on_payload=replace)
    config = sent(server)["generationConfig"]
    assert (config["temperature"], config["stopSequences"]) == (0.25, ["END"])


def test_tool_choice_reaches_the_tool_config(server):
    server.add(Reply(chunks=wire.response([wire.call("get_weather", {"location": "Oslo"})])))
    run(server, ask(tools=[WEATHER]), tool_choice="any")
    assert sent(server)["toolConfig"] == {"functionCallingConfig": {"mode": "ANY"}}


def test_the_key_may_come_from_gemini_api_key_or_google_api_key(server, monkeypatch):
    monkeypatch.setenv("GOOGLE_API_KEY", "AIza-google-var-1111")
    server.add(Reply(chunks=wire.response([wire.text("a")])), Reply(chunks=wire.response([wire.text("b")])))
    run(server, api_key=None)
    assert server.requests[0].headers["x-goog-api-key"] == "AIza-google-var-1111"
    monkeypatch.setenv("GEMINI_API_KEY", "AIza-gemini-var-2222")  # Pi's variable wins
    run(server, api_key=None)
    assert server.requests[1].headers["x-goog-api-key"] == "AIza-gemini-var-2222"


# --- failures ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("status", [429, 500, 503])
def test_rate_limits_and_server_errors_are_retried_by_the_sdk(server, status):
    failure = wire.error_body(status, "RESOURCE_EXHAUSTED" if status == 429 else "INTERNAL", "try later")
    server.add(Reply.json(status, failure), Reply(chunks=wire.response([wire.text("made it")])))
    events, final = run(server)
    assert len(server.requests) == 2
    assert final.stop_reason == "stop" and final.content[0].text == "made it"
    assert types(events).count("start") == 1 and types(events).count("done") == 1


def test_an_error_without_retries_is_an_error_message_with_googles_text(server):
    failure = wire.error_body(429, "RESOURCE_EXHAUSTED", "Resource has been exhausted (e.g. check quota).")
    server.add(Reply.json(429, failure))
    events, final = run(server, max_retries=0)
    assert len(server.requests) == 1
    assert types(events) == ["error"] and events[0].reason == "error"
    assert final.stop_reason == "error"
    assert final.error_message == "429 RESOURCE_EXHAUSTED: Resource has been exhausted (e.g. check quota)."
    assert (final.api, final.model) == ("google-generative-ai", "gemini-2.5-flash")


def test_retries_give_up_with_the_last_error(server):
    failure = wire.error_body(500, "INTERNAL", "An internal error has occurred.")
    server.add(*[Reply.json(500, failure)] * 3)
    _, final = run(server, max_retries=2)
    assert len(server.requests) == 3
    assert final.error_message == "500 INTERNAL: An internal error has occurred."


def test_a_400_is_not_retried_and_a_key_echoed_back_is_redacted(server):
    failure = wire.error_body(400, "INVALID_ARGUMENT", f"API key not valid: {KEY}. Please pass a valid API key.")
    server.add(Reply.json(400, failure))
    events, final = run(server)
    assert len(server.requests) == 1
    assert final.error_message == "400 INVALID_ARGUMENT: API key not valid: [redacted]. Please pass a valid API key."
    assert_no_key(events)


def test_an_error_sent_mid_stream_keeps_the_partial(server):
    half = wire.event(wire.chunk([wire.text("Half")]))
    server.add(Reply(chunks=[half, wire.event(wire.error_body(503, "UNAVAILABLE", "The model is overloaded."))]))
    events, final = run(server)
    assert final.stop_reason == "error" and final.error_message == "503 UNAVAILABLE: The model is overloaded."
    assert final.content[0].text == "Half" and types(events)[:3] == ["start", "text_start", "text_delta"]


def test_a_dropped_connection_keeps_the_partial_text(server):
    chunks = [wire.event(wire.chunk([wire.text(t)], usage_metadata=wire.usage())) for t in ("Hello ", "wor", "ld")]
    server.add(Reply(chunks=[*chunks, *wire.response([wire.text("!")])], disconnect_after=2))
    events, final = run(server)
    assert types(events) == ["start", "text_start", "text_delta", "text_delta", "error"]
    assert final.stop_reason == "error" and final.error_message.startswith("Connection error: ")
    assert final.content[0].text == "Hello wor" and final.usage.input == 12
    assert_no_key(events)


def test_a_stream_closed_without_a_finish_reason_is_an_error(server):
    server.add(Reply(chunks=[wire.event(wire.chunk([wire.text("Hi")]))]))
    _, final = run(server)
    assert final.stop_reason == "error"  # Pi: a complete-looking "stop"
    assert final.error_message == "Gemini's stream ended without a finish reason (the response may be truncated)"
    assert final.content[0].text == "Hi"


def test_a_malformed_chunk_is_an_error_message_not_an_exception(server):
    good = wire.event(wire.chunk([wire.text("Hi")]))
    server.add(Reply(chunks=[good, b"data: {not json\r\n\r\n"]))
    final = asyncio.run(complete(model_for(server), ask(), api_key=KEY))
    assert final.stop_reason == "error"
    assert final.error_message.startswith("Malformed chunk in Gemini's stream: ")
    assert final.content[0].text == "Hi"


def test_abort_mid_stream_returns_promptly_with_the_partial(server):
    chunks = wire.response(*[[wire.text("tok ")] for _ in range(40)])
    server.add(Reply(chunks=chunks, chunk_delay=0.2))
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


def test_a_missing_key_names_the_environment_variables(server):
    events, final = run(server, api_key=None)
    assert types(events) == ["error"]
    assert final.stop_reason == "error"
    assert "GEMINI_API_KEY" in final.error_message and "GOOGLE_API_KEY" in final.error_message
    assert server.requests == []


def test_without_the_sdk_the_error_says_how_to_install_it(server, monkeypatch):
    monkeypatch.setitem(sys.modules, "google.genai", None)  # makes `from google import genai` fail
    _, final = run(server)
    assert final.stop_reason == "error"
    assert "pip install 'pi_notebook[google]'" in final.error_message
    assert server.requests == []


# --- the google/ models --------------------------------------------------------------------------------


def test_google_models_come_from_the_catalogue():
    model = get_model("google/gemini-2.5-flash")
    assert (model.api, model.provider, model.base_url) == (
        "google-generative-ai",
        "google",
        "https://generativelanguage.googleapis.com/v1beta",
    )
    assert model.reasoning and model.input == ["text", "image"] and model.max_tokens == 65536
    assert model.context_window >= 1_000_000 and model.cost.output > model.cost.input > 0
    models = list_models("google")
    assert {"gemini-2.5-pro", "gemini-2.5-flash", "gemini-3-pro-preview"} <= {m.id for m in models}
    for m in models:
        assert m.api == "google-generative-ai" and m.id.startswith("gemini-")
        assert not any(word in m.id for word in ("embedding", "tts", "image", "live"))
        assert m.context_window >= m.max_tokens > 0
    assert not get_model("google/gemini-2.0-flash").reasoning
    assert model_note(model) is None


def test_an_unknown_gemini_runs_with_gemini_2_5_pros_fields():
    model = get_model("google/gemini-9-ultra")
    base = get_model("google/gemini-2.5-pro")
    assert (model.id, model.cost, model.context_window, model.api) == (
        "gemini-9-ultra",
        base.cost,
        base.context_window,
        base.api,
    )
    assert "defaults from gemini-2.5-pro" in model_note(model)


def test_without_genai_prices_gemini_models_still_resolve(monkeypatch):
    monkeypatch.setattr(catalogue_module, "_genai_providers", dict)
    monkeypatch.setattr(catalogue_module, "_entries", catalogue_module._entries.__wrapped__)
    model = get_model("google/gemini-2.5-flash")
    assert (model.api, model.reasoning, model.max_tokens, model.cost.input) == ("google-generative-ai", True, 65536, 0)
    assert not get_model("google/gemini-2.0-flash").reasoning


def test_google_gemini_base_url_sends_the_models_elsewhere(server, monkeypatch):
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", server.url)  # a bare host, as the SDK reads this variable
    model = get_model("google/gemini-2.5-flash")
    assert model.base_url == server.url
    server.add(Reply(chunks=wire.response([wire.text("via proxy")])))
    _, final = run(server, model=model)
    assert final.content[0].text == "via proxy"
    assert server.requests[0].path == wire.stream_path("gemini-2.5-flash")
