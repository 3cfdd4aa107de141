"""The faux provider: scripted responses for tests, demos and teaching, streamed like a real model.

    from pi_notebook.ai import faux
    faux.set_responses([faux.message([faux.thinking("2+2..."), faux.text("4")])])
    await complete(faux.model(), context)      # streams start, thinking_*, text_*, done
    faux.calls[-1]                             # the exact Context the "LLM" received

A step is an :class:`AssistantMessage`, a content block, a list of blocks, a plain string (a text block), or a
factory ``f(context, options, state, model)`` (taking any leading subset of those arguments) returning one of
those. ``api``, ``provider`` and ``model`` of every response are those of the model called; usage is
estimated at four characters per token and costs nothing.
"""

from __future__ import annotations

import asyncio
import inspect
import itertools
import json
import math
import os
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterable
from typing import Any

from ._base import now_ms
from .events import PartialBuilder, final_event
from .options import StreamOptions
from .types import (
    AssistantMessage,
    Context,
    ImageContent,
    Model,
    StopReason,
    TextContent,
    ThinkingContent,
    ToolCall,
    Usage,
)

NO_MORE_RESPONSES = "No more faux responses queued"
_ids = itertools.count(1)


def text(value: str) -> TextContent:
    """A text block."""
    return TextContent(text=value)


def thinking(value: str) -> ThinkingContent:
    """A thinking block."""
    return ThinkingContent(thinking=value)


def tool_call(name: str, arguments: dict[str, Any] | None = None, id: str | None = None) -> ToolCall:
    """A tool call block; ids default to ``faux_call_<n>``."""
    return ToolCall(id=id or f"faux_call_{next(_ids)}", name=name, arguments=arguments or {})


def message(
    blocks: Any = (),
    stop_reason: StopReason | None = None,
    error_message: str | None = None,
    **fields: Any,
) -> AssistantMessage:
    """A scripted assistant message. ``stop_reason`` defaults to ``toolUse`` if there is a tool call."""
    content = _blocks(blocks)
    if stop_reason is None:
        stop_reason = "toolUse" if any(b.type == "toolCall" for b in content) else "stop"
    return AssistantMessage(
        content=content, api="faux", provider="faux", model="faux-1", stop_reason=stop_reason,
        error_message=error_message, **fields,
    )  # fmt: skip


def _blocks(value: Any) -> list[Any]:
    if isinstance(value, str):
        return [text(value)]
    if isinstance(value, (TextContent, ThinkingContent, ToolCall)):
        return [value]
    return [b for item in value for b in _blocks(item)]


def estimate_tokens(chars: int) -> int:
    """Four characters per token, rounded up."""
    return math.ceil(chars / 4)


def _block_text(block: TextContent | ImageContent | ThinkingContent | ToolCall) -> str:
    if block.type == "text":
        return block.text
    if block.type == "thinking":
        return block.thinking
    return json.dumps(block.to_pi_json(), ensure_ascii=False)


def _serialize_context(context: Context) -> str:
    parts = [f"system:{context.system_prompt}"] if context.system_prompt else []
    for m in context.messages:
        body = m.content if isinstance(m.content, str) else "\n".join(_block_text(b) for b in m.content)
        parts.append(f"{m.role}:{body}")
    if context.tools:
        parts.append("tools:" + json.dumps([t.to_pi_json() for t in context.tools]))
    return "\n\n".join(parts)


class FauxProvider:
    """A scripted model. ``calls`` records a deep copy of every :class:`Context` received, and ``call_options``
    the :class:`StreamOptions` of each call (thinking level, session id, limits; the API key and signal left
    out), so a test can check what reached the provider."""

    def __init__(self, api: str = "faux", *, chunk_chars: int = 16, tokens_per_second: float | None = None):
        self.api = api
        self.chunk_chars = chunk_chars
        self.tokens_per_second = tokens_per_second
        self.calls: list[Context] = []
        self.call_options: list[StreamOptions] = []
        self.state: dict[str, Any] = {}
        self._prompts: dict[str, str] = {}  # session id -> last prompt, for the simulated prompt cache
        self._queue: deque[Any] = deque()

    def model(self, id: str = "faux-1", **overrides: Any) -> Model:
        """A model served by this provider (Pi's faux defaults)."""
        fields: dict[str, Any] = {
            "id": id, "name": "Faux Model", "api": self.api, "provider": "faux",
            "base_url": "http://localhost:0", "reasoning": False, "input": ["text", "image"],
            "context_window": 128_000, "max_tokens": 16_384,
        }  # fmt: skip
        fields.update(overrides)
        return Model(**fields)

    def set_responses(self, steps: Iterable[Any]) -> None:
        """Replace the queue of scripted responses."""
        self._queue = deque(steps)

    def append_responses(self, steps: Iterable[Any]) -> None:
        """Add responses to the end of the queue."""
        self._queue.extend(steps)

    @property
    def pending_count(self) -> int:
        """Responses still queued."""
        return len(self._queue)

    def reset(self) -> None:
        """Empty the queue and forget recorded calls (in place: ``faux.calls`` stays the same list)."""
        self._queue.clear()
        self.calls.clear()
        self.call_options.clear()
        self.state.clear()
        self._prompts.clear()

    async def stream(self, model: Model, context: Context, options: StreamOptions) -> AsyncIterator[Any]:
        """The provider's stream function. The default provider's is registered for api ``"faux"``; another
        instance serves its ``api`` once registered: ``register_provider(p.api, p.stream)``."""
        self.calls.append(context.model_copy(deep=True))
        self.call_options.append(options.model_copy(update={"api_key": None, "signal": None}))
        if options.on_payload is not None:
            options.on_payload(context.to_pi_json(), model)
        scripted = self._next_response(model, context, options)
        builder = PartialBuilder(AssistantMessage(api=model.api, provider=model.provider, model=model.id))
        async for event in self._play(builder, scripted):
            yield event
        final = builder.message
        final.stop_reason = scripted.stop_reason
        final.error_message = scripted.error_message
        final.usage = self._usage(context, final, scripted, options)
        final.timestamp = now_ms()
        yield final_event(final)

    def _next_response(self, model: Model, context: Context, options: StreamOptions) -> AssistantMessage:
        if not self._queue:
            return message([], stop_reason="error", error_message=NO_MORE_RESPONSES)
        step = self._queue.popleft()
        if callable(step):
            args = (context, options, self.state, model)
            try:
                accepted = len(inspect.signature(step).parameters)
            except (TypeError, ValueError):
                accepted = 1
            try:
                step = step(*args[:accepted])
            except Exception as e:  # a failing factory is a failed response, as in Pi
                return message([], stop_reason="error", error_message=str(e) or type(e).__name__)
        return step if isinstance(step, AssistantMessage) else message(step)

    async def _play(self, builder: PartialBuilder, scripted: AssistantMessage) -> AsyncIterator[Any]:
        yield builder.start()
        for block in scripted.content:
            opened: TextContent | ThinkingContent | ToolCall
            if block.type == "toolCall":
                payload = json.dumps(block.arguments, ensure_ascii=False, separators=(",", ":"))
                opened = block.model_copy(update={"arguments": {}})
            else:
                payload = block.text if block.type == "text" else block.thinking
                opened = block.model_copy(update={"text": ""} if block.type == "text" else {"thinking": ""})
            yield builder.open(opened)
            index = len(builder.message.content) - 1
            for start in range(0, len(payload), self.chunk_chars):
                await self._pace(self.chunk_chars)
                yield builder.delta(index, payload[start : start + self.chunk_chars])
            yield builder.close(index)

    async def _pace(self, chars: int) -> None:
        # Without pacing, still yield to the loop so aborts and UI updates get a turn.
        delay = estimate_tokens(chars) / self.tokens_per_second if self.tokens_per_second else 0
        await asyncio.sleep(delay)

    def _usage(
        self, context: Context, final: AssistantMessage, scripted: AssistantMessage, options: StreamOptions
    ) -> Usage:
        if scripted.usage.total_tokens:
            return scripted.usage.model_copy(deep=True)
        out_chars = sum(len(_block_text(b)) for b in final.content)
        prompt_text = _serialize_context(context)
        output = estimate_tokens(out_chars)
        cached = 0
        if options.session_id and options.cache_retention != "none":
            # A prompt cache per session, as newer Pi's faux model simulates: the part of the prompt shared with
            # the previous call of the session is read from the cache, the rest is written to it.
            previous = self._prompts.get(options.session_id, "")
            shared = len(os.path.commonprefix([previous, prompt_text]))  # noqa: RUF071 - characters, not paths
            self._prompts[options.session_id] = prompt_text
            cached = estimate_tokens(shared) if previous else 0
            written = estimate_tokens(len(prompt_text)) - cached
            return Usage(input=0, output=output, cache_read=cached, cache_write=written,
                         total_tokens=cached + written + output)  # fmt: skip
        prompt = estimate_tokens(len(prompt_text))
        return Usage(input=prompt, output=output, total_tokens=prompt + output)


#: The default faux provider, registered for api ``"faux"``; the module functions below drive it.
provider = FauxProvider()

model: Callable[..., Model] = provider.model
set_responses = provider.set_responses
append_responses = provider.append_responses
reset = provider.reset
calls: list[Context] = provider.calls
call_options: list[StreamOptions] = provider.call_options
