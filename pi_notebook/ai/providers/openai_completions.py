"""The ``openai-completions`` transport: OpenAI Chat Completions and every server that speaks it.

OpenAI itself, Ollama, vLLM, the llama.cpp server, LM Studio, OpenRouter, Groq, … are all reached through the
official ``openai`` SDK (an optional extra, imported only when a call is made). The request body comes from
the pure :func:`~.openai_completions_convert.build_openai_completions_request`; this module sends it, reads
the ``chat.completion.chunk`` stream and translates it into Pi's events, as Pi's ``openai-completions.ts``
does. The chunks are read as plain JSON (the SDK's raw response), as Pi reads them: building the SDK's model of
every chunk would cost more than everything else done per token. :mod:`.register_builtins` registers
:func:`stream_openai_completions` for api ``openai-completions``.

Failures are raised with a useful message (HTTP status and the API's own words); :func:`~..streaming.stream`
turns them into a terminal ``error`` event that keeps the partial message. The API key is only ever handed
to the SDK, and is redacted (in every form) from any error text.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

from pydantic import BaseModel

from ..events import AssistantMessageEvent
from ..jstext import js_json_stringify
from ..keys import require_api_key
from ..options import StreamOptions
from ..types import (
    Context,
    Model,
    StopReason,
    TextContent,
    ThinkingContent,
    ToolCall,
    Usage,
)
from .openai_completions_convert import build_openai_completions_request
from .openai_stream import EventTranslator, cached_input_usage, get_field, import_openai, stream_openai

__all__ = ["INSTALL_HINT", "REASONING_FIELDS", "stream_openai_completions"]

INSTALL_HINT = "The openai-completions provider needs the OpenAI SDK: pip install 'pi_notebook[openai]'"
"""The error message when the ``openai`` package is not installed."""
REASONING_FIELDS = ("reasoning_content", "reasoning", "reasoning_text")
"""Delta fields that carry reasoning, by server (llama.cpp / DeepSeek, OpenRouter / Ollama, others); the
first non-empty one is used, since some servers (chutes.ai) fill two of them with the same text."""

_STOP_REASONS: dict[str, StopReason] = {
    "stop": "stop",
    "end": "stop",
    "length": "length",
    "tool_calls": "toolUse",
    "function_call": "toolUse",
}
# Request options of `create()` that are not body fields: a body key with one of these names goes in
# `extra_body` instead, so it is sent rather than taken as an option.
_REQUEST_OPTIONS = frozenset({"self", "extra_headers", "extra_query", "extra_body", "timeout"})


def stream_openai_completions(
    model: Model, context: Context, options: StreamOptions
) -> AsyncIterator[AssistantMessageEvent]:
    """Stream one Chat Completions call as Pi's events (the provider of api ``openai-completions``).

    ``options.max_retries`` (an extra option, default 2) is the SDK's retry count for 408/409/429/5xx and
    connection errors before the response starts; ``options.on_payload(params, model)`` sees the exact body.
    """
    sdk = import_openai(INSTALL_HINT)
    key = require_api_key(model.provider, options.api_key)
    params = build_openai_completions_request(model, context, options)

    def send(client: Any, _seen: dict[str, Any]) -> Any:
        # `params` as built: unlike the other providers, this one does not send a body on_payload returns.
        return client.chat.completions.with_raw_response.create(**_create_arguments(client, params))

    return stream_openai(sdk, model, options, key, params, send, _ChunkTranslator(model), _api_message, "chunk")


def _create_arguments(client: Any, params: dict[str, Any]) -> dict[str, Any]:
    """``params`` as keyword arguments of ``create()``: the fields it does not know (``enable_thinking``,
    OpenRouter's ``provider`` …) travel in ``extra_body``, so the body sent is ``params`` exactly."""
    known = set(inspect.signature(client.chat.completions.create).parameters) - _REQUEST_OPTIONS
    arguments = {k: v for k, v in params.items() if k in known}
    unknown = {k: v for k, v in params.items() if k not in known}
    if unknown:
        arguments["extra_body"] = unknown
    return arguments


class _ChunkTranslator(EventTranslator):
    """Turns ``chat.completion.chunk`` objects into events, keeping the partial message.

    Blocks of one kind stay open while that kind streams; when another kind starts (text after thinking,
    a tool call after text …) the open blocks are closed, as in Pi. Parallel tool calls are told apart by
    their ``index``, so fragments of interleaved calls still reach the right block.
    """

    truncated = "The stream ended without a finish_reason (the response may be truncated)"

    def __init__(self, model: Model):
        super().__init__(model)
        self.kind: str | None = None  # the kind of the open blocks
        self.open: list[int] = []  # content indices of the open blocks
        self.calls: dict[Any, int] = {}  # tool call stream index → content index, for open tool calls
        self.pending_details: dict[str, Any] = {}  # encrypted reasoning that came before its tool call

    def feed(self, chunk: Any) -> Iterator[AssistantMessageEvent]:
        fields = _fields(chunk)
        choices = fields.get("choices")
        choice = choices[0] if isinstance(choices, list) and choices else None
        choice_fields = _fields(choice)
        # Moonshot puts the usage on the choice instead of the chunk.
        usage = fields.get("usage") or choice_fields.get("usage")
        if usage:
            self.message.usage = _usage(self.model, usage)
        if choice is None:
            return
        reason = choice_fields.get("finish_reason")
        if reason:
            self.finished = True
            self.message.stop_reason, self.message.error_message = _map_finish_reason(reason)
        delta = choice_fields.get("delta")
        if delta is None:
            return
        delta_fields = _fields(delta)
        # Reasoning before the answer: a chunk that carries both ends the thinking and starts the text.
        for field in REASONING_FIELDS:
            reasoning = delta_fields.get(field)
            if _nonempty_str(reasoning):
                yield from self._append("thinking", reasoning, field)
                break
        content = delta_fields.get("content")
        if _nonempty_str(content):
            if self.kind == "text":  # the common case, without a generator of its own
                yield self.builder.delta(self.open[-1], content)
            else:
                yield from self._append("text", content)
        for call in delta_fields.get("tool_calls") or []:
            yield from self._tool_call(call)
        details = delta_fields.get("reasoning_details")
        if isinstance(details, list):
            self._reasoning_details(details)

    def close_open(self) -> Iterator[AssistantMessageEvent]:
        for index in self.open:
            yield self.builder.close(index)
        self.kind, self.open, self.calls = None, [], {}

    def _open(self, kind: str, block: TextContent | ThinkingContent | ToolCall) -> Iterator[Any]:
        if self.kind != kind:
            yield from self.close_open()
            self.kind = kind
        event = self.builder.open(block)
        self.open.append(event.content_index)
        yield event

    def _append(self, kind: str, text: str, signature: str | None = None) -> Iterator[Any]:
        if self.kind != kind:
            # openai-completions records which delta field carried the reasoning, to send it back there.
            block = (
                TextContent(text="") if kind == "text" else ThinkingContent(thinking="", thinking_signature=signature)
            )
            yield from self._open(kind, block)
        yield self.builder.delta(self.open[-1], text)

    def _tool_call(self, call: Any) -> Iterator[Any]:
        position = get_field(call, "index")
        call_id = get_field(call, "id") or ""
        function = get_field(call, "function")
        name = get_field(function, "name") or ""
        arguments = get_field(function, "arguments")
        index = self._find_call(position, call_id)
        if index is None:
            yield from self._open("toolCall", ToolCall(id=call_id, name=name, arguments={}))
            index = self.open[-1]
        if position is not None:
            self.calls[position] = index
        block = self._call(index)
        # Some servers repeat id and name on every fragment: the first one wins.
        block.id = block.id or call_id
        block.name = block.name or name
        if block.id in self.pending_details:
            block.thought_signature = js_json_stringify(self.pending_details.pop(block.id))
        yield self.builder.delta(index, arguments if isinstance(arguments, str) else "")

    def _find_call(self, position: Any, call_id: str) -> int | None:
        """The open tool-call block a fragment continues, or ``None`` when it starts a new call."""
        if self.kind != "toolCall":
            return None
        if position is not None and position in self.calls:
            index = self.calls[position]
            known_id = self._call(index).id
            # A new id under a known index: a server that numbers every call 0.
            return None if call_id and known_id and call_id != known_id else index
        if call_id:
            return next((i for i in self.open if self._call(i).id == call_id), None)
        # Neither a known index nor an id: a continuation, from servers that send the index only once.
        return self.open[-1] if position is None and self.open else None

    def _call(self, index: int) -> ToolCall:
        block = self.message.content[index]
        assert isinstance(block, ToolCall)  # what `calls` and, while the kind is toolCall, `open` point at
        return block

    def _reasoning_details(self, details: list[Any]) -> None:
        """OpenRouter's encrypted reasoning belongs to a tool call and must go back with it next turn."""
        for detail in details:
            if not isinstance(detail, dict) or detail.get("type") != "reasoning.encrypted":
                continue
            if not (detail.get("id") and detail.get("data")):
                continue
            call = next((b for b in self.message.content if isinstance(b, ToolCall) and b.id == detail["id"]), None)
            if call is not None:
                call.thought_signature = js_json_stringify(detail)
            else:
                self.pending_details[detail["id"]] = detail


def _map_finish_reason(reason: str) -> tuple[StopReason, str | None]:
    """Pi's mapping; anything but a normal end (``content_filter``, unknown reasons) is an error."""
    if reason in _STOP_REASONS:
        return _STOP_REASONS[reason], None
    return "error", f"Provider finish_reason: {reason}"


def _usage(model: Model, raw: Any) -> Usage:
    """OpenAI usage → ours (the total is the sum of the parts).

    Deviation from Pi 0.58.3, which added ``reasoning_tokens`` to ``completion_tokens``: OpenAI already counts
    reasoning inside ``completion_tokens``, so that double-counted output and cost (newer Pi fixed it too).
    """
    cached = _count(get_field(get_field(raw, "prompt_tokens_details"), "cached_tokens"))
    return cached_input_usage(
        model, _count(get_field(raw, "prompt_tokens")), cached, _count(get_field(raw, "completion_tokens"))
    )


def _api_message(body: dict[str, Any]) -> str | None:
    message = body.get("message")
    text = message if isinstance(message, str) and message else json.dumps(body)[:1000]
    # OpenRouter puts the upstream provider's own error text here.
    raw = get_field(body.get("metadata"), "raw")
    return f"{text}\n{raw}" if raw else text


_NO_FIELDS: dict[str, Any] = {}


class _Attributes:
    """``.get(name)`` for an object that is neither a dict nor an SDK model: its attribute, or ``None``."""

    __slots__ = ("obj",)

    def __init__(self, obj: Any):
        self.obj = obj

    def get(self, name: str) -> Any:
        return getattr(self.obj, name, None)


def _fields(obj: Any) -> Any:
    """What :func:`get_field` reads, as one object with ``.get(name)``, for reading several fields of one chunk part.

    An SDK model keeps its fields in ``__dict__`` and the others in ``__pydantic_extra__``: reading them there
    spares pydantic's ``__getattr__`` (and the ``AttributeError`` it raises) for every field a chunk lacks."""
    if obj is None:
        return _NO_FIELDS
    if isinstance(obj, dict):
        return obj
    if isinstance(obj, BaseModel):
        extra = obj.__pydantic_extra__
        return {**obj.__dict__, **extra} if extra else obj.__dict__
    return _Attributes(obj)


def _count(value: Any) -> int | float:
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else 0


def _nonempty_str(value: Any) -> bool:
    return isinstance(value, str) and value != ""
