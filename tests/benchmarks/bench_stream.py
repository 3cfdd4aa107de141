"""P4 / P4b: one openai-completions response of 10,000 small deltas, from a local SSE server.

The server (127.0.0.1, a thread of this process) answers every POST with the same prepared body: a role chunk,
10,000 ``chat.completion.chunk`` lines each carrying a few characters of ``content``, a finish chunk, a usage
chunk and ``data: [DONE]``, written at once (chunked transfer encoding), so the client's work is what is
measured.

* **baseline**: the raw ``openai`` SDK, ``AsyncOpenAI(...).chat.completions.create(stream=True)`` iterated to
  the end, joining the text of the deltas (the least a caller does with a stream), client created and closed
  per call as our provider does.
* **P4**: ``pi_notebook.ai.complete()`` on a model whose ``base_url`` is the server.
* **P4b**: ``Agent.prompt()`` (default settings: abort signal, loop guard) on the same model, with one
  subscriber that reads every event, as the notebook's display does.

Our provider reads the chunks as plain JSON through the SDK's raw response (``with_raw_response`` and
``parse(to=AsyncStream[object])``), so it skips the SDK's model of each chunk. Comparing with the typed SDK
would flatter us (0.3×: the baseline pays for models we never build), so the goals (≤ 1.5×) are against the
fair baseline, the SDK iterating the same stream untyped: the difference is our own work (events, snapshots of
the partial, the agent loop), given per delta in the row's text. The typed SDK stays as a reference row.

The floor: Pi's event contract, an event per delta carrying the partial message, which we snapshot per event
so that a consumer may keep events (``ai/events.py``'s ``PartialBuilder``; Pi passes one mutable object). A
reference row times those events alone, built for the same deltas with no I/O; ``untyped SDK + events alone``
is the floor ``complete()`` stands on where it misses 1.5×, and ``complete()`` itself the floor of
``Agent.prompt()`` (the loop must add little to the provider).

Each call runs in its own ``asyncio.run`` on a fresh thread (``harness.run_async``), for both sides.
"""

from __future__ import annotations

import json
from typing import Any

from .harness import Result, Stat, compare, measure, ratio_goal, run_async, timed
from .sse import complete_text, sse_server

KEY = "sk-bench-000"
MODEL_ID = "bench-model"


def sse_body(deltas: int) -> bytes:
    """The whole streamed response: ``deltas`` content chunks of a few characters (a word and a count,
    so that the text never repeats itself for the loop guard), as OpenAI sends them."""

    def chunk(delta: dict[str, Any], finish: str | None = None) -> str:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        body = {
            "id": "chatcmpl-bench",
            "object": "chat.completion.chunk",
            "created": 1700000000,
            "model": MODEL_ID,
            "system_fingerprint": "fp_bench",
            "choices": [choice],
        }
        return f"data: {json.dumps(body)}\n\n"

    parts = [chunk({"role": "assistant", "content": ""})]
    parts += [chunk({"content": piece}) for piece in text_pieces(deltas)]  # never repeats
    parts.append(chunk({}, "stop"))
    usage = {"prompt_tokens": 20, "completion_tokens": deltas, "total_tokens": 20 + deltas}
    last = {"id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 1, "model": MODEL_ID}
    parts.append(f"data: {json.dumps({**last, 'choices': [], 'usage': usage})}\n\n")
    parts.append("data: [DONE]\n\n")
    return "".join(parts).encode()


def bench_model(base_url: str) -> Any:
    from pi_notebook.ai.types import Model

    return Model(id=MODEL_ID, name="bench", api="openai-completions", provider="openai", base_url=base_url)


def raw_sdk(base_url: str) -> str:
    """The baseline: the openai SDK streaming the response, text joined."""
    import openai

    async def go() -> str:
        client = openai.AsyncOpenAI(api_key=KEY, base_url=base_url)
        try:
            stream = await client.chat.completions.create(
                model=MODEL_ID, messages=[{"role": "user", "content": "Count."}], stream=True
            )
            pieces = []
            async for chunk in stream:
                if chunk.choices and chunk.choices[0].delta.content:
                    pieces.append(chunk.choices[0].delta.content)
            return "".join(pieces)
        finally:
            await client.close()

    return run_async(go)


def untyped_sdk(base_url: str) -> str:
    """The SDK iterating the same stream without building a model per chunk (what our provider reads)."""
    import openai

    async def go() -> str:
        client = openai.AsyncOpenAI(api_key=KEY, base_url=base_url)
        try:
            raw = await client.chat.completions.with_raw_response.create(
                model=MODEL_ID, messages=[{"role": "user", "content": "Count."}], stream=True
            )
            pieces = []
            async for chunk in raw.parse(to=openai.AsyncStream[object]):
                choices = chunk.get("choices")
                if choices and choices[0]["delta"].get("content"):
                    pieces.append(choices[0]["delta"]["content"])
            return "".join(pieces)
        finally:
            await client.close()

    return run_async(go)


def ours_complete(base_url: str) -> str:
    return complete_text(bench_model(base_url), KEY)


def ours_agent(base_url: str) -> str:
    from pi_notebook.agent_core import Agent

    async def go() -> str:
        agent = Agent(bench_model(base_url), api_key=KEY)
        seen = [0]

        def listener(event: Any) -> None:
            seen[0] += 1
            if event.type == "message_update":
                event.assistant_message_event.type  # noqa: B018 - what a display reads

        agent.subscribe(listener)
        await agent.prompt("Count.")
        final = agent.state.messages[-1]
        assert final.stop_reason == "stop", final.error_message
        return final.content[0].text

    return run_async(go)


@measure("P4", "openai-completions stream of 10,000 small deltas: complete() and Agent.prompt() vs the raw SDK")
def p4(quick: bool) -> list[Result]:
    deltas = 1_000 if quick else 10_000
    repeats = 1 if quick else 9
    with sse_server(sse_body(deltas)) as url:
        expected = raw_sdk(url)
        assert ours_complete(url) == expected and ours_agent(url) == expected
        assert untyped_sdk(url) == expected
        results = []
        for row, ours, what in (("P4", ours_complete, "complete()"), ("P4b", ours_agent, "Agent.prompt()")):
            base, timing = compare(lambda: untyped_sdk(url), lambda fn=ours: fn(url), repeats)
            extra = (timing.median - base.median) / deltas * 1e6
            what = f"{what} on {deltas:,} deltas (our own work {extra:+.1f} µs/delta)"
            results.append(ratio_goal(Result(row, what, "SDK, untyped chunks", timing, base), 1.5, quick, 0.15))
        events = events_row("P4", deltas, repeats)
        complete_row, agent_row = results
        untyped = complete_row.baseline.median if complete_row.baseline else 1.0
        stands_on(complete_row, (untyped + events.ours.median) / untyped, "untyped SDK + the events alone")
        stands_on(agent_row, complete_row.ratio or 0, "complete()'s ratio: the provider under the loop")
        base, timing = compare(lambda: raw_sdk(url), lambda: ours_complete(url), repeats)
        typed = Result("P4", f"complete() on {deltas:,} deltas", "SDK, typed chunks (reference)", timing, base)
        typed.note = "the SDK builds a model per chunk, which our provider never does: not a fair baseline"
        return [*results, events, typed]


def text_pieces(deltas: int) -> list[str]:
    """The deltas' texts, as both servers send them."""
    words = ("the", "quick", "brown", "fox", "jumps", "over", "a", "lazy", "dog")
    return [f" {words[i % len(words)]}{i}" for i in range(deltas)]


def build_events(pieces: list[str]) -> int:
    """Pi's events for one text answer of ``pieces``, as the providers build them (start, text start, a delta
    event with its snapshot of the partial per piece, text end), each dropped once built as a consumer would."""
    from pi_notebook.ai import AssistantMessage, TextContent
    from pi_notebook.ai.events import PartialBuilder

    builder = PartialBuilder(AssistantMessage(content=[], api="openai-completions", provider="openai", model="m"))
    builder.start()
    builder.open(TextContent(text=""))
    for piece in pieces:
        builder.delta(0, piece)
    return len(builder.close(0).content)


def events_row(rid: str, deltas: int, repeats: int) -> Result:
    """A reference row: the events alone (no I/O, no parsing), the floor's own part."""
    pieces = text_pieces(deltas)
    build_events(pieces)
    alone = Stat.of([timed(lambda: build_events(pieces)) for _ in range(repeats)])
    what = f"Pi's events alone for {deltas:,} deltas (a snapshot of the partial per event, no I/O)"
    return Result(rid, what, "—", alone, note="reference: the floor's own part")


def stands_on(result: Result, floor: float, note: str) -> None:
    """Declare the floor ``result`` stands on where its goal is out of reach (see ``Result.floor``)."""
    result.floor, result.floor_note = floor, note
