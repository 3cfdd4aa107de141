"""The ``openai-responses`` transport: OpenAI's Responses API through the official ``openai`` SDK.

The body comes from the pure :func:`~.openai_responses_convert.build_openai_responses_request`; this module
sends it with ``client.responses.create(stream=True)`` (its raw response: each event read as the JSON the server
sent, see :mod:`.openai_stream`) and translates the semantic events into Pi's, as Pi's ``processResponsesStream``
does:

* each output item becomes one block: ``reasoning`` → thinking (its summary parts streamed as the text,
  ``\\n\\n`` between parts; when the item is done its JSON, encrypted content included, becomes the
  ``thinking_signature`` and is sent back as the reasoning item next turn, to the same model), ``message`` →
  text (``output_text`` and ``refusal`` deltas; the item id and phase become the ``text_signature``),
  ``function_call`` → a tool call with id ``<call_id>|<item_id>`` whose arguments are parsed on every delta.
  Items are told apart by ``output_index``, so interleaved items reach the right block. Other item kinds
  (built-in tools) are skipped, as in Pi.
* ``response.completed`` gives the usage (cached tokens are part of ``input_tokens``, so input excludes them;
  cost from the model's prices, halved for the ``flex`` and doubled for the ``priority`` service tier) and
  the stop reason: ``completed`` → stop (toolUse when there are tool calls), ``incomplete`` → length,
  ``failed``/``cancelled`` → error.
* ``error`` and ``response.failed`` events fail the call with the API's code and message.

Where Pi is wrong we are more correct (tests in ``tests/ai/test_openai_responses_stream.py``):

1. ``response.incomplete`` (the output limit was reached) is Pi's ``length`` with its usage; Pi ignores the
   event and reports a complete ``stop`` answer without usage. An incomplete answer for ``content_filter``
   is an error saying so.
2. A stream that ends without ``response.completed`` (a proxy closing cleanly mid-answer) is an error, not
   a complete answer.
3. The thinking text streams ``\\n\\n`` *between* summary parts (Pi appends it after each part and then
   replaces the text when the item is done), so the deltas add up to the final thinking.

Failures are raised with a useful message (HTTP status and the API's own words); :func:`~..streaming.stream`
turns them into a terminal ``error`` event keeping the partial message, and an abort into ``aborted``. The
API key is only ever handed to the SDK and is redacted, in every form, from any error text.
:mod:`.register_builtins` registers :func:`stream_openai_responses` for api ``openai-responses``.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

from ..events import AssistantMessageEvent, parse_partial_json
from ..jstext import js_json_stringify
from ..keys import require_api_key
from ..options import StreamOptions
from ..types import Context, Model, StopReason, TextContent, ThinkingContent, ToolCall, Usage
from .openai_responses_convert import build_openai_responses_request, encode_text_signature
from .openai_stream import EventTranslator, cached_input_usage, get_field, import_openai, stream_openai

__all__ = ["INSTALL_HINT", "SERVICE_TIER_COST", "UPGRADE_HINT", "map_status", "stream_openai_responses"]

INSTALL_HINT = "The openai-responses provider needs the OpenAI SDK: pip install 'pi_notebook[openai]'"
"""The error message when the ``openai`` package is not installed."""
UPGRADE_HINT = (
    "The openai-responses provider needs openai>=1.66 (the first with the Responses API), found {version}: "
    "pip install -U openai, or use openai-completions/<model id>"
)
"""The error message when the installed ``openai`` package predates the Responses API."""
SERVICE_TIER_COST = {"flex": 0.5, "priority": 2.0}
"""Cost multipliers of the service tiers that are not billed at the standard price (Pi's)."""

_STATUSES: dict[str, StopReason] = {
    "completed": "stop",
    "incomplete": "length",
    "failed": "error",
    "cancelled": "error",
    "in_progress": "stop",  # Pi: "wonky", but a final response should not carry these
    "queued": "stop",
}


def map_status(status: str | None) -> StopReason:
    """Our stop reason for a final response status (Pi's ``mapStopReason``; none means ``stop``)."""
    if not status:
        return "stop"
    try:
        return _STATUSES[status]
    except KeyError:
        raise RuntimeError(f"Unhandled stop reason: {status}") from None


def stream_openai_responses(
    model: Model, context: Context, options: StreamOptions
) -> AsyncIterator[AssistantMessageEvent]:
    """Stream one Responses call as Pi's events (the provider of api ``openai-responses``).

    Extra options: ``max_retries`` (the SDK's retries on 408/409/429/5xx and connection errors before the
    response starts, default 2), ``reasoning_summary`` and ``service_tier`` (see the request builder).
    ``options.on_payload(params, model)`` sees the exact body; like Pi's, it may return a replacement.
    """
    sdk = _import_sdk()
    key = require_api_key(model.provider, options.api_key)
    params = build_openai_responses_request(model, context, options)
    translator = _EventTranslator(model, (options.model_extra or {}).get("service_tier"))
    return stream_openai(sdk, model, options, key, params, _send, translator, _api_message, "event")


def _send(client: Any, params: dict[str, Any]) -> Any:
    # Everything but `stream` goes in extra_body, so the body sent is `params` exactly, whatever fields this SDK
    # version knows (older ones lack prompt_cache_retention, for one).
    body = {name: value for name, value in params.items() if name != "stream"}
    return client.responses.with_raw_response.create(stream=True, extra_body=body)


def _import_sdk() -> Any:
    openai = import_openai(INSTALL_HINT)
    if not hasattr(openai.AsyncOpenAI, "responses"):
        raise ImportError(UPGRADE_HINT.format(version=getattr(openai, "__version__", "an older version")))
    return openai


class _EventTranslator(EventTranslator):
    """Turns the SDK's Responses stream events into our events, keeping the partial message."""

    # Deviation 2: a stream cut short at an event boundary must not look like a complete answer.
    truncated = "The stream ended before response.completed (the response may be truncated)"

    def __init__(self, model: Model, service_tier: str | None = None):
        super().__init__(model)
        self.service_tier = service_tier
        self.blocks: dict[int, int] = {}  # output_index → content index, while the item is open
        self.summary_parts: dict[int, int] = {}  # content index of a thinking block → summary parts seen
        self.arguments: dict[int, str] = {}  # content index of a tool call → the arguments text streamed
        self.handlers = {
            "response.output_item.added": self._item_added,
            "response.reasoning_summary_part.added": self._summary_part,
            "response.reasoning_summary_text.delta": self._thinking_delta,
            "response.output_text.delta": self._text_delta,
            "response.refusal.delta": self._text_delta,
            "response.function_call_arguments.delta": self._arguments_delta,
            "response.function_call_arguments.done": self._arguments_done,
            "response.output_item.done": self._item_done,
            "response.completed": self._completed,
            "response.incomplete": self._completed,
            "response.failed": self._failed,
            "error": self._error,
        }

    def feed(self, event: Any) -> Iterator[AssistantMessageEvent]:
        handler = self.handlers.get(get_field(event, "type"))
        return handler(event) if handler is not None else iter(())

    def close_open(self) -> Iterator[AssistantMessageEvent]:
        for index in list(self.blocks.values()):  # items the server never closed
            yield self.builder.close(index)
        self.blocks = {}

    # --- items -----------------------------------------------------------------------------------------

    def _item_added(self, event: Any) -> Iterator[AssistantMessageEvent]:
        yield from self._open(get_field(event, "output_index"), get_field(event, "item"))

    def _open(self, position: Any, item: Any) -> Iterator[AssistantMessageEvent]:
        kind = get_field(item, "type")
        if kind == "reasoning":
            block: Any = ThinkingContent(thinking="")
        elif kind == "message":
            block = TextContent(text="")
        elif kind == "function_call":
            block = ToolCall(id=_call_id(item), name=get_field(item, "name") or "", arguments={})
        else:
            return  # built-in tool calls (web search, …) are not part of Pi's message model
        yield self.builder.open(block)
        index = len(self.message.content) - 1
        self.blocks[position] = index
        initial = get_field(item, "arguments") if kind == "function_call" else None
        if isinstance(initial, str) and initial:
            yield from self._append_arguments(index, initial)

    def _item_done(self, event: Any) -> Iterator[AssistantMessageEvent]:
        item = get_field(event, "item")
        position = get_field(event, "output_index")
        if position not in self.blocks:  # a server that skipped output_item.added
            yield from self._open(position, item)
        index = self.blocks.pop(position, None)
        if index is None:
            return
        block = self.message.content[index]
        kind = get_field(item, "type")
        if isinstance(block, ThinkingContent) and kind == "reasoning":
            raw = _as_dict(item)
            summary = raw.get("summary")
            parts = summary if isinstance(summary, list) else []
            block.thinking = "\n\n".join(_summary_text(part) for part in parts)
            block.thinking_signature = js_json_stringify(raw)  # the reasoning item, sent back next turn
            self.summary_parts.pop(index, None)
        elif isinstance(block, TextContent) and kind == "message":
            parts = get_field(item, "content") or []
            block.text = "".join(_part_text(part) for part in parts)
            block.text_signature = encode_text_signature(get_field(item, "id") or "", get_field(item, "phase"))
        elif isinstance(block, ToolCall) and kind == "function_call":
            block.id = _call_id(item)
            block.name = get_field(item, "name") or block.name
            if not self.arguments.get(index):  # as in Pi: what streamed wins, else the item's arguments
                final = get_field(item, "arguments")
                yield from self._set_arguments(index, final if isinstance(final, str) and final else "{}")
            self.arguments.pop(index, None)
        yield self.builder.close(index)

    # --- deltas ----------------------------------------------------------------------------------------

    def _block(self, event: Any, kind: type) -> int | None:
        index = self.blocks.get(get_field(event, "output_index"))
        return index if index is not None and isinstance(self.message.content[index], kind) else None

    def _summary_part(self, event: Any) -> Iterator[AssistantMessageEvent]:
        index = self._block(event, ThinkingContent)
        if index is None:
            return
        seen = self.summary_parts.get(index, 0)
        self.summary_parts[index] = seen + 1
        if seen:  # deviation 3: the separator goes between parts
            yield self.builder.delta(index, "\n\n")

    def _thinking_delta(self, event: Any) -> Iterator[AssistantMessageEvent]:
        index = self._block(event, ThinkingContent)
        delta = get_field(event, "delta")
        if index is not None and isinstance(delta, str) and delta:
            yield self.builder.delta(index, delta)

    def _text_delta(self, event: Any) -> Iterator[AssistantMessageEvent]:
        index = self._block(event, TextContent)
        delta = get_field(event, "delta")
        if index is not None and isinstance(delta, str) and delta:
            yield self.builder.delta(index, delta)

    def _arguments_delta(self, event: Any) -> Iterator[AssistantMessageEvent]:
        index = self._block(event, ToolCall)
        delta = get_field(event, "delta")
        if index is not None and isinstance(delta, str) and delta:
            yield from self._append_arguments(index, delta)

    def _arguments_done(self, event: Any) -> Iterator[AssistantMessageEvent]:
        index = self._block(event, ToolCall)
        final = get_field(event, "arguments")
        if index is not None and isinstance(final, str):
            yield from self._set_arguments(index, final)

    def _append_arguments(self, index: int, text: str) -> Iterator[AssistantMessageEvent]:
        self.arguments[index] = self.arguments.get(index, "") + text
        yield self.builder.delta(index, text)  # the arguments are re-parsed on every fragment

    def _set_arguments(self, index: int, text: str) -> Iterator[AssistantMessageEvent]:
        """Make the arguments ``text`` (the complete ones). The deltas still add up to the arguments: when
        ``text`` continues what streamed, only the rest is sent as a delta."""
        streamed = self.arguments.get(index, "")
        if text.startswith(streamed):
            if text != streamed:
                yield from self._append_arguments(index, text[len(streamed) :])
            return
        # The complete arguments disagree with the fragments (never seen): they win, as in Pi.
        self.arguments[index] = text
        self.builder._json[index] = text  # what the builder parses the arguments from when the block closes
        self.message.content[index].arguments = parse_partial_json(text)

    # --- the end ---------------------------------------------------------------------------------------

    def _completed(self, event: Any) -> Iterator[AssistantMessageEvent]:
        response = get_field(event, "response")
        self.finished = True
        usage = get_field(response, "usage")
        if usage is not None:
            self.message.usage = self._usage(usage, get_field(response, "service_tier"))
        status = get_field(response, "status")
        if get_field(event, "type") == "response.incomplete":
            status = status or "incomplete"
        message = self.message
        message.stop_reason = map_status(status)
        if message.stop_reason == "length":
            reason = get_field(get_field(response, "incomplete_details"), "reason")
            if reason == "content_filter":  # deviation 1: not a length stop
                message.stop_reason, message.error_message = "error", "incomplete: content_filter"
        elif message.stop_reason == "error":
            message.error_message = _response_error(response)
        elif message.stop_reason == "stop" and any(isinstance(b, ToolCall) for b in message.content):
            message.stop_reason = "toolUse"
        return iter(())

    def _usage(self, raw: Any, tier: str | None) -> Usage:
        cached = _count(get_field(get_field(raw, "input_tokens_details"), "cached_tokens"))
        input_tokens, output = _count(get_field(raw, "input_tokens")), _count(get_field(raw, "output_tokens"))
        usage = cached_input_usage(self.model, input_tokens, cached, output, _count(get_field(raw, "total_tokens")))
        cost = usage.cost
        multiplier = SERVICE_TIER_COST.get(tier or self.service_tier or "", 1.0)
        if multiplier != 1.0:
            cost.input *= multiplier
            cost.output *= multiplier
            cost.cache_read *= multiplier
            cost.cache_write *= multiplier
            cost.total = cost.input + cost.output + cost.cache_read + cost.cache_write
        return usage

    def _failed(self, event: Any) -> Iterator[AssistantMessageEvent]:
        raise RuntimeError(_response_error(get_field(event, "response")))

    def _error(self, event: Any) -> Iterator[AssistantMessageEvent]:
        code, message = get_field(event, "code"), get_field(event, "message") or "Unknown error"
        raise RuntimeError(f"Error Code {code}: {message}" if code else message)


def _call_id(item: Any) -> str:
    return f"{get_field(item, 'call_id') or ''}|{get_field(item, 'id') or ''}"


def _part_text(part: Any) -> str:
    kind = get_field(part, "type")
    if kind == "output_text":
        return get_field(part, "text") or ""
    if kind == "refusal":
        return get_field(part, "refusal") or ""
    return ""


def _summary_text(part: Any) -> str:
    text = part.get("text") if isinstance(part, dict) else None
    return text if isinstance(text, str) else ""


def _as_dict(item: Any) -> dict[str, Any]:
    """An SDK object as the JSON the server sent (fields it did not send are left out)."""
    if isinstance(item, dict):
        return item
    to_dict = get_field(item, "to_dict")
    data = to_dict(mode="json") if callable(to_dict) else item.model_dump(mode="json", exclude_unset=True)
    return data if isinstance(data, dict) else {}


def _response_error(response: Any) -> str:
    """Pi's wording for a failed response: ``<code>: <message>``, else the incomplete reason."""
    error = get_field(response, "error")
    if error is not None:
        return f"{get_field(error, 'code') or 'unknown'}: {get_field(error, 'message') or 'no message'}"
    reason = get_field(get_field(response, "incomplete_details"), "reason")
    if reason:
        return f"incomplete: {reason}"
    return "Unknown error (no error details in response)"


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _api_message(body: dict[str, Any]) -> str | None:
    error = body.get("error")
    detail = error if isinstance(error, dict) else body
    message = detail.get("message")
    return message if isinstance(message, str) and message else json.dumps(body)[:1000]
