"""P4r: one openai-responses answer of 10,000 small text deltas, from a local SSE server.

The server (127.0.0.1, a thread of this process) answers every POST with the same prepared body, the events
OpenAI's Responses API streams for a text answer: ``response.created``, ``response.in_progress``, the
message item's ``output_item.added`` and ``content_part.added``, 10,000 ``response.output_text.delta``
events each carrying a few characters, the ``.done`` events and ``response.completed`` with usage, written at
once (chunked transfer encoding), so the client's work is what is measured.

* **baseline**: the raw ``openai`` SDK, ``AsyncOpenAI(...).responses.create(stream=True)`` iterated to the
  end, joining the deltas of the ``response.output_text.delta`` events (the least a caller does with the
  stream), client created and closed per call as our provider does.
* **P4r**: ``pi_notebook.ai.complete()`` on an ``openai-responses`` model whose ``base_url`` is the server.

Our provider reads the events as plain JSON through the SDK's raw response (``with_raw_response`` and
``parse(to=AsyncStream[object])``), skipping the SDK's model of each event. The goal (≤ 1.5×) is therefore
against the SDK iterating the same stream untyped (the typed SDK, which pays for models we never build, stays
as a reference row): the difference is our own work (events, the partial message), given per delta. Its floor,
where it misses, is as P4's: the untyped SDK plus Pi's events alone (a reference row).

Each call runs in its own ``asyncio.run`` on a fresh thread (``harness.run_async``), for both sides.
"""

from __future__ import annotations

import json
from typing import Any

from .bench_stream import events_row, stands_on, text_pieces
from .harness import Result, compare, measure, ratio_goal, run_async
from .sse import complete_text, sse_server

KEY = "sk-bench-000"
MODEL_ID = "bench-model"


def sse_body(deltas: int) -> bytes:
    """The whole streamed answer: ``deltas`` text deltas of a few characters (a word and a count)."""
    pieces = text_pieces(deltas)
    text = "".join(pieces)
    response = {"id": "resp_bench", "object": "response", "created_at": 1, "status": "in_progress", "model": MODEL_ID}
    item = {"id": "msg_bench", "type": "message", "status": "in_progress", "content": [], "role": "assistant"}
    part = {"type": "output_text", "annotations": [], "logprobs": [], "text": ""}
    where = {"item_id": "msg_bench", "output_index": 0, "content_index": 0}
    done_part = {**part, "text": text}
    done_item = {**item, "status": "completed", "content": [done_part]}
    usage = {
        "input_tokens": 20,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": deltas,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 20 + deltas,
    }
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": response},
        {"type": "response.in_progress", "response": response},
        {"type": "response.output_item.added", "output_index": 0, "item": item},
        {"type": "response.content_part.added", **where, "part": part},
    ]
    events += [{"type": "response.output_text.delta", **where, "delta": p, "logprobs": []} for p in pieces]
    events += [
        {"type": "response.output_text.done", **where, "text": text, "logprobs": []},
        {"type": "response.content_part.done", **where, "part": done_part},
        {"type": "response.output_item.done", "output_index": 0, "item": done_item},
        {
            "type": "response.completed",
            "response": {**response, "status": "completed", "output": [done_item], "usage": usage},
        },
    ]
    out = []
    for number, event in enumerate(events):
        out.append(f"event: {event['type']}\ndata: {json.dumps({**event, 'sequence_number': number})}\n\n")
    return "".join(out).encode()


def raw_sdk(base_url: str) -> str:
    """The baseline: the openai SDK streaming the Responses answer, text deltas joined."""
    import openai

    async def go() -> str:
        client = openai.AsyncOpenAI(api_key=KEY, base_url=base_url)
        try:
            stream = await client.responses.create(model=MODEL_ID, input="Count.", stream=True)
            pieces = []
            async for event in stream:
                if event.type == "response.output_text.delta":
                    pieces.append(event.delta)
            return "".join(pieces)
        finally:
            await client.close()

    return run_async(go)


def untyped_sdk(base_url: str) -> str:
    """The SDK iterating the same stream without building a model per event (what our provider reads)."""
    import openai

    async def go() -> str:
        client = openai.AsyncOpenAI(api_key=KEY, base_url=base_url)
        try:
            raw = await client.responses.with_raw_response.create(model=MODEL_ID, input="Count.", stream=True)
            pieces = []
            async for event in raw.parse(to=openai.AsyncStream[object]):
                if event.get("type") == "response.output_text.delta":
                    pieces.append(event["delta"])
            return "".join(pieces)
        finally:
            await client.close()

    return run_async(go)


def ours_complete(base_url: str) -> str:
    from pi_notebook.ai.types import Model

    return complete_text(
        Model(id=MODEL_ID, name="bench", api="openai-responses", provider="openai", base_url=base_url), KEY
    )


@measure("P4r", "openai-responses stream of 10,000 small text deltas: complete() vs the raw SDK")
def p4r(quick: bool) -> list[Result]:
    deltas = 1_000 if quick else 10_000
    repeats = 1 if quick else 9
    with sse_server(sse_body(deltas)) as url:
        expected = raw_sdk(url)
        assert ours_complete(url) == expected
        assert untyped_sdk(url) == expected
        floor, timing = compare(lambda: untyped_sdk(url), lambda: ours_complete(url), repeats)
        extra = (timing.median - floor.median) / deltas * 1e6
        what = f"complete() on {deltas:,} Responses deltas (our own work {extra:+.1f} µs/delta)"
        own = Result("P4r", what, "SDK, untyped events", timing, floor)
        base, ours = compare(lambda: raw_sdk(url), lambda: ours_complete(url), repeats)
        typed = Result("P4r", f"complete() on {deltas:,} Responses deltas", "SDK, typed events (reference)", ours, base)
        typed.note = "the SDK builds a model per event, which our provider never does: not a fair baseline"
        events = events_row("P4r", deltas, repeats)
        stands_on(own, (floor.median + events.ours.median) / floor.median, "untyped SDK + the events alone")
        return [ratio_goal(own, 1.5, quick, 0.15), events, typed]
