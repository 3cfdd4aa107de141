"""stream()/complete() and the faux provider: Pi's event protocol, and failures as data."""

import asyncio
import threading

import pytest

from pi_notebook.ai import Context, TextContent, UnknownApiError, UserMessage, complete, faux, register_provider, stream
from pi_notebook.ai.abort import AbortController
from pi_notebook.ai.events import TextDeltaEvent, TextStartEvent
from pi_notebook.ai.options import StreamOptions

pytestmark = pytest.mark.usefixtures("fresh_faux")


def ask(text="2+2?", **kw):
    return Context(system_prompt="Be brief.", messages=[UserMessage(content=text, timestamp=1)], **kw)


async def collect(s):
    return [e async for e in s], await s.result()


def run(coro):
    return asyncio.run(coro)


def test_a_scripted_response_streams_in_pis_event_order():
    faux.set_responses(
        [[faux.thinking("Two plus two..."), faux.text("It is 4."), faux.tool_call("calc", {"expr": "2+2"})]]
    )
    events, final = run(collect(stream(faux.model(), ask())))
    types = [e.type for e in events]
    assert types[0] == "start" and types[-1] == "done"
    blocks = [t for t in types if t.endswith(("_start", "_end")) and t != "start"]
    assert blocks == [
        "thinking_start",
        "thinking_end",
        "text_start",
        "text_end",
        "toolcall_start",
        "toolcall_end",
    ]
    assert "".join(e.delta for e in events if e.type == "text_delta") == "It is 4."
    assert final.stop_reason == "toolUse" and events[-1].reason == "toolUse"
    assert [b.type for b in final.content] == ["thinking", "text", "toolCall"]
    assert final.content[2].arguments == {"expr": "2+2"}
    assert (final.api, final.provider, final.model) == ("faux", "faux", "faux-1")


def test_tool_call_arguments_are_an_object_on_every_delta():
    faux.set_responses([faux.tool_call("write", {"path": "notes/today.md", "content": "x" * 60})])
    events, _ = run(collect(stream(faux.model(), ask())))
    deltas = [e for e in events if e.type == "toolcall_delta"]
    assert len(deltas) > 2  # really streamed in pieces
    for e in deltas:
        assert isinstance(e.partial.content[0].arguments, dict)
    assert deltas[0].partial.content[0].arguments.get("path", "").startswith("notes")
    assert events[-2].tool_call.arguments == {"path": "notes/today.md", "content": "x" * 60}


def test_each_event_keeps_its_own_snapshot():
    faux.set_responses(["a fairly long answer that needs several chunks"])
    events, _ = run(collect(stream(faux.model(), ask())))
    texts = [e.partial.content[0].text for e in events if isinstance(e, TextDeltaEvent)]
    assert texts == sorted(texts, key=len) and len(set(texts)) == len(texts)
    assert next(e for e in events if isinstance(e, TextStartEvent)).partial.content[0].text == ""


def test_calls_record_exactly_what_the_llm_saw_and_factories_see_it_too():
    faux.set_responses([lambda context: faux.text(f"you said {context.messages[-1].content!r}")])
    final = run(complete(faux.model(), ask("hello")))
    assert final.content[0].text == "you said 'hello'"
    assert len(faux.calls) == 1
    assert faux.calls[0].system_prompt == "Be brief."
    assert faux.calls[0].messages == [UserMessage(content="hello", timestamp=1)]


def test_usage_is_estimated_at_four_characters_per_token():
    faux.set_responses(["12345678"])
    final = run(complete(faux.model(), Context(messages=[UserMessage(content="abcd", timestamp=1)])))
    assert final.usage.input == 3  # "user:abcd" = 9 chars → ceil(9 / 4)
    assert final.usage.output == 2 and final.usage.total_tokens == 5
    assert final.usage.cost.total == 0


def test_an_empty_queue_or_a_failing_factory_is_an_error_message_not_an_exception():
    final = run(complete(faux.model(), ask()))
    assert (final.stop_reason, final.error_message) == ("error", "No more faux responses queued")

    def broken(context):
        raise RuntimeError("factory broke")

    faux.set_responses([broken])
    events, final = run(collect(stream(faux.model(), ask())))
    assert events[-1].type == "error" and final.error_message == "factory broke"


def test_a_scripted_error_keeps_its_partial_content():
    faux.set_responses([faux.message([faux.text("half an ans")], stop_reason="error", error_message="overloaded")])
    events, final = run(collect(stream(faux.model(), ask())))
    assert events[-1].type == "error" and events[-1].reason == "error"
    assert final.content[0].text == "half an ans" and final.error_message == "overloaded"


def test_abort_mid_stream_keeps_the_partial_answer():
    faux.set_responses(["word " * 400])
    controller = AbortController()

    async def go():
        s = stream(faux.model(), ask(), signal=controller.signal)
        seen = 0
        async for event in s:
            seen += event.type == "text_delta"
            if seen == 3:
                controller.abort()
        return await s.result()

    final = run(go())
    assert final.stop_reason == "aborted" and final.error_message == "Request was aborted"
    assert 0 < len(final.content[0].text) < len("word " * 400)


def test_abort_from_another_thread_wakes_a_stalled_provider():
    async def stalled(model, context, options):
        from pi_notebook.ai.events import PartialBuilder

        b = PartialBuilder(faux.message([]))
        yield b.start()
        yield b.open(TextContent(text=""))
        yield b.delta(1 - 1, "partial")
        await asyncio.sleep(3600)  # a provider waiting on a dead connection

    register_provider("stalled-test", stalled)
    controller = AbortController()
    threading.Timer(0.2, controller.abort).start()
    final = run(complete(faux.model(api="stalled-test"), ask(), signal=controller.signal))
    assert final.stop_reason == "aborted" and final.content[0].text == "partial"


def test_a_provider_that_raises_or_stops_early_still_ends_with_an_error_event():
    async def exploding(model, context, options):
        from pi_notebook.ai.events import PartialBuilder

        b = PartialBuilder(faux.message([]))
        yield b.start()
        yield b.open(TextContent(text=""))
        yield b.delta(0, "so far")
        raise ConnectionError("other side closed")

    async def silent(model, context, options):
        return
        yield

    register_provider("exploding-test", exploding)
    register_provider("silent-test", silent)
    events, final = run(collect(stream(faux.model(api="exploding-test"), ask())))
    assert events[-1].type == "error" and final.error_message == "other side closed"
    assert final.content[0].text == "so far"
    final = run(complete(faux.model(api="silent-test"), ask()))
    assert final.stop_reason == "error" and "without a final event" in final.error_message
    assert (final.api, final.model) == ("silent-test", "faux-1")


def test_an_unknown_api_is_refused_before_the_stream_starts():
    with pytest.raises(UnknownApiError, match="No API provider registered for api: nope"):
        stream(faux.model(api="nope"), ask())


def test_the_package_function_stream_stays_a_function_once_its_module_is_imported():
    import pi_notebook.ai as ai
    import pi_notebook.ai.streaming as streaming

    assert ai.stream is streaming.stream is stream and callable(ai.stream)


def test_the_api_key_never_shows_in_options_repr_or_dump():
    options = StreamOptions.coerce({"apiKey": "sk-secret-123", "maxTokens": 10})
    assert "sk-secret-123" not in repr(options) and "sk-secret-123" not in str(options.model_dump())
    assert options.key() == "sk-secret-123" and options.max_tokens == 10


def test_with_a_session_id_the_shared_prompt_prefix_is_read_from_a_simulated_cache():
    faux.set_responses(["first", "second"])
    history = [UserMessage(content="a long question " * 20, timestamp=1)]
    one = run(complete(faux.model(), Context(messages=history), session_id="s1"))
    assert one.usage.cache_read == 0 and one.usage.cache_write > 0 and one.usage.input == 0
    history += [one, UserMessage(content="and a follow-up", timestamp=2)]
    two = run(complete(faux.model(), Context(messages=history), session_id="s1"))
    assert two.usage.cache_read >= one.usage.cache_write - 1  # the whole first prompt came from the cache
    assert two.usage.cache_write < two.usage.cache_read
    faux.set_responses(["no cache"])
    three = run(complete(faux.model(), Context(messages=history), session_id="s1", cache_retention="none"))
    assert three.usage.cache_read == 0 and three.usage.input > 0
