"""The ``anthropic-messages`` transport: one streamed call through the official ``anthropic`` SDK.

The request body comes from :func:`~.anthropic_convert.build_anthropic_request` (pure); this module only
opens the connection and translates the SDK's raw stream events (``message_start``, ``content_block_*``,
``message_delta``, ``message_stop``) into our events, as Pi's ``streamAnthropic`` does:

* ``start`` once ``message_start`` arrives (its partial carries the input and cache token counts);
  ``text_*``, ``thinking_*`` (the signature accumulates silently into ``thinking_signature``; a
  ``redacted_thinking`` block becomes thinking ``"[Reasoning redacted]"`` holding the encrypted payload)
  and ``toolcall_*`` (each JSON fragment is a delta, the arguments are re-parsed on every one).
* Usage: ``totalTokens`` = input + output + cacheRead + cacheWrite, cost from the model's prices.
* Stop reasons: ``end_turn``/``pause_turn``/``stop_sequence`` → stop, ``max_tokens`` → length,
  ``tool_use`` → toolUse, ``refusal``/``sensitive`` → error; anything else fails the stream with
  ``Unhandled stop reason: <r>``.
* An OAuth token (``sk-ant-oat…``) is sent as a bearer token with Claude Code's headers, and tool names that
  the request gave Claude Code's casing are mapped back to the caller's names.

Failures are raised and become the terminal ``error`` event in :func:`~pi_notebook.ai.streaming.stream`; an
abort cancels this generator at its await point, which closes the HTTP response. The SDK is imported only
when a call is made, so the package works without the ``anthropic`` extra. The key never leaves the SDK
client: it is not in the body, the events, the messages or the error texts.
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator, Iterator
from typing import Any

from pydantic import SecretStr

from ..events import AssistantMessageEvent, PartialBuilder, final_event
from ..keys import require_api_key
from ..models import calculate_cost
from ..options import StreamOptions
from ..redact import redact
from ..types import AssistantMessage, Context, Model, StopReason, TextContent, ThinkingContent, ToolCall
from .anthropic_convert import build_anthropic_request, supports_adaptive_thinking

__all__ = [
    "CLAUDE_CODE_VERSION",
    "AnthropicStreamError",
    "client_headers",
    "map_stop_reason",
    "stream_anthropic",
]

CLAUDE_CODE_VERSION = "2.1.75"
"""The Claude Code release an OAuth request presents itself as (``user-agent: claude-cli/<version>``)."""

REDACTED_THINKING = "[Reasoning redacted]"
"""Text of a thinking block whose reasoning the safety filter encrypted."""

INSTALL_HINT = (
    "The anthropic-messages provider needs the Anthropic SDK, which is not installed: "
    "pip install 'pi_notebook[anthropic]'"
)

_OAUTH_MARKER = "sk-ant-oat"
_FINE_GRAINED_TOOL_STREAMING = "fine-grained-tool-streaming-2025-05-14"
_INTERLEAVED_THINKING = "interleaved-thinking-2025-05-14"
_CLAUDE_CODE_BETAS = ("claude-code-20250219", "oauth-2025-04-20")
_STOP_REASONS: dict[str, StopReason] = {
    "end_turn": "stop",
    "max_tokens": "length",
    "tool_use": "toolUse",
    "refusal": "error",
    "pause_turn": "stop",  # a paused server-tool turn: the caller may simply send it again
    "stop_sequence": "stop",
    "sensitive": "error",
}
_STOP_ERRORS = {
    "refusal": "The model refused to answer (stop reason: refusal)",
    "sensitive": "The response was flagged by a safety filter (stop reason: sensitive)",
}


class AnthropicStreamError(RuntimeError):
    """A failed Anthropic call; the message is what the final assistant message reports."""


def map_stop_reason(reason: str) -> StopReason:
    """Our stop reason for Anthropic's; raises :class:`AnthropicStreamError` for an unknown one."""
    try:
        return _STOP_REASONS[reason]
    except KeyError:
        raise AnthropicStreamError(f"Unhandled stop reason: {reason}") from None


def client_headers(model: Model, options: StreamOptions, oauth: bool) -> dict[str, str]:
    """The default headers of the SDK client, as Pi sets them (later sources win).

    Pi's betas: fine-grained tool streaming always, interleaved thinking unless switched off with the
    ``interleaved_thinking=False`` option or the model thinks adaptively (built in there). An OAuth token
    must also look like Claude Code. Then ``model.headers``, then ``options.headers``.
    """
    betas = [_FINE_GRAINED_TOOL_STREAMING]
    if _extra(options, "interleaved_thinking", True) and not supports_adaptive_thinking(model.id):
        betas.append(_INTERLEAVED_THINKING)
    if oauth:
        headers = {
            "anthropic-beta": ",".join([*_CLAUDE_CODE_BETAS, *betas]),
            "user-agent": f"claude-cli/{CLAUDE_CODE_VERSION}",
            "x-app": "cli",
        }
    else:
        headers = {"anthropic-beta": ",".join(betas)}
    return {**headers, **(model.headers or {}), **(options.headers or {})}


async def stream_anthropic(
    model: Model, context: Context, options: StreamOptions
) -> AsyncIterator[AssistantMessageEvent]:
    """Stream one response of an ``anthropic-messages`` model (the registered provider function).

    Extra options: ``max_retries`` (SDK retries on 408/409/429/5xx, default 2), ``interleaved_thinking``
    (default ``True``) and ``tool_choice`` (``"auto"``, ``"any"``, ``"none"`` or ``{"type": "tool", ...}``).
    """
    try:
        import anthropic
    except ImportError as e:
        raise ImportError(INSTALL_HINT) from e
    key = require_api_key(model.provider, options.api_key) or ""
    oauth = _OAUTH_MARKER in key
    # The key may come from the environment: the body builder must see it too, to choose the OAuth mode.
    resolved = options.model_copy(update={"api_key": SecretStr(key)})
    params = build_anthropic_request(model, context, resolved, tool_choice=options.tool_choice)
    params = await options.call_on_payload(params, model)  # as in Pi, it may return a replacement

    translation = _Translation(model, context, oauth)
    try:
        async with anthropic.AsyncAnthropic(
            api_key=None if oauth else key,
            auth_token=key if oauth else None,
            base_url=model.base_url or None,
            default_headers=client_headers(model, options, oauth),
            max_retries=_extra(options, "max_retries", 2),
        ) as client:
            # Older SDKs read the other credential from the environment as well: send only the one chosen.
            if oauth:
                client.api_key = None
            else:
                client.auth_token = None
            body = dict(params)
            required = {name: body.pop(name) for name in ("model", "messages", "max_tokens")}
            body.pop("stream", None)
            # Everything but the required fields goes through extra_body, so the SDK sends the body as built
            # even when it predates a field (e.g. output_config) and would reject it as a keyword argument.
            sdk_stream = await client.messages.create(**required, stream=True, extra_body=body)
            async with sdk_stream:
                async for raw in sdk_stream:
                    for event in translation.handle(raw):
                        yield event
    except AnthropicStreamError:
        raise
    except Exception as e:
        # `from None`: the SDK's own exception may quote the key (the stream keeps only this message).
        raise AnthropicStreamError(_scrub(_describe(e, anthropic), key)) from None
    yield translation.finish()


def _extra(options: StreamOptions, name: str, default: Any) -> Any:
    value = (options.model_extra or {}).get(name)
    return default if value is None else value


class _Translation:
    """The partial message built from the SDK's raw events, and the events it produces."""

    def __init__(self, model: Model, context: Context, oauth: bool):
        self.model = model
        self.tools = context.tools or []
        self.oauth = oauth
        message = AssistantMessage(api=model.api, provider=model.provider, model=model.id)
        self.builder = PartialBuilder(message)
        self.blocks: dict[int, int] = {}  # Anthropic's block index → index in our content
        self.started = False
        self.stopped = False
        self.raw_stop: str | None = None

    def handle(self, raw: Any) -> Iterator[AssistantMessageEvent]:
        kind = getattr(raw, "type", None)
        if kind == "message_start":
            self._usage(raw.message.usage, replace=True)
        if not self.started and kind != "message_stop":
            self.started = True
            yield self.builder.start()
        if kind == "content_block_start":
            yield from self._open(raw.index, raw.content_block)
        elif kind == "content_block_delta":
            yield from self._delta(raw.index, raw.delta)
        elif kind == "content_block_stop" and raw.index in self.blocks:
            yield self.builder.close(self.blocks.pop(raw.index))
        elif kind == "message_delta":
            reason = getattr(raw.delta, "stop_reason", None)
            if reason:
                self.builder.message.stop_reason = map_stop_reason(reason)
                self.raw_stop = reason
            if getattr(raw, "usage", None) is not None:
                self._usage(raw.usage, replace=False)
        elif kind == "message_stop":
            self.stopped = True

    def finish(self) -> AssistantMessageEvent:
        if not self.stopped:
            # A proxy that closes the connection cleanly mid-answer must not look like a complete answer.
            raise AnthropicStreamError("Anthropic's stream ended before message_stop")
        message = self.builder.message
        if message.stop_reason == "error":
            message.error_message = _STOP_ERRORS.get(self.raw_stop or "", "An unknown error occurred")
        return final_event(message)

    def _open(self, index: int, block: Any) -> Iterator[AssistantMessageEvent]:
        kind = getattr(block, "type", None)
        initial = ""
        if kind == "text":
            opened: Any = TextContent(text="")
            initial = getattr(block, "text", "") or ""
        elif kind == "thinking":
            opened = ThinkingContent(thinking="", thinking_signature=getattr(block, "signature", "") or "")
            initial = getattr(block, "thinking", "") or ""
        elif kind == "redacted_thinking":
            opened = ThinkingContent(thinking=REDACTED_THINKING, thinking_signature=block.data, redacted=True)
        elif kind == "tool_use":
            name = self._tool_name(block.name) if self.oauth else block.name
            opened = ToolCall(id=block.id, name=name, arguments=dict(getattr(block, "input", None) or {}))
        else:
            return  # server tools, web search results…: not part of Pi's message model, skipped as Pi does
        yield self.builder.open(opened)
        self.blocks[index] = len(self.builder.message.content) - 1
        if initial:  # Anthropic starts blocks empty; should one not, its text still arrives as a delta
            yield self.builder.delta(self.blocks[index], initial)

    def _delta(self, index: int, delta: Any) -> Iterator[AssistantMessageEvent]:
        if index not in self.blocks:
            return
        position = self.blocks[index]
        block = self.builder.message.content[position]
        kind = getattr(delta, "type", None)
        if kind == "text_delta" and block.type == "text":
            yield self.builder.delta(position, delta.text)
        elif kind == "thinking_delta" and block.type == "thinking":
            yield self.builder.delta(position, delta.thinking)
        elif kind == "input_json_delta" and block.type == "toolCall":
            yield self.builder.delta(position, delta.partial_json)
        elif kind == "signature_delta" and block.type == "thinking":
            # No event: the signature is opaque, only needed to send the thinking back.
            block.thinking_signature = (block.thinking_signature or "") + delta.signature

    def _usage(self, raw: Any, replace: bool) -> None:
        """``message_start`` sets all counts; ``message_delta`` only those present (proxies omit some)."""
        usage = self.builder.message.usage
        for ours, theirs in (
            ("input", "input_tokens"),
            ("output", "output_tokens"),
            ("cache_read", "cache_read_input_tokens"),
            ("cache_write", "cache_creation_input_tokens"),
        ):
            value = getattr(raw, theirs, None)
            if value is not None or replace:
                setattr(usage, ours, value or 0)
        usage.total_tokens = usage.input + usage.output + usage.cache_read + usage.cache_write
        calculate_cost(self.model, usage)

    def _tool_name(self, name: str) -> str:
        """The caller's name for a tool the request renamed to Claude Code's casing (``Read`` → ``read``)."""
        for tool in self.tools:
            if tool.name.lower() == name.lower():
                return tool.name
        return name


def _describe(error: Exception, sdk: Any) -> str:
    """A useful one-line text for a failure of the SDK or the connection."""
    if isinstance(error, sdk.APIStatusError):
        return _status_text(error)
    if isinstance(error, sdk.APITimeoutError):
        return str(error)
    if isinstance(error, sdk.APIConnectionError):
        cause = error.__cause__
        return f"Connection error: {cause}" if cause is not None and str(cause) else str(error)
    if isinstance(error, json.JSONDecodeError):
        return f"Malformed event in Anthropic's stream: {error}"
    if isinstance(error, _transport_errors()):
        return f"Connection error: {error}"
    return str(error) or type(error).__name__


def _status_text(error: Any) -> str:
    """``<status> <error type>: <API message>`` (the status is left out for an error event mid-stream)."""
    body = error.body
    detail = body.get("error") if isinstance(body, dict) else None
    if isinstance(detail, dict) and detail.get("message"):
        text = f"{detail.get('type') or 'error'}: {detail['message']}"
    elif isinstance(body, (str, bytes)) and body:
        text = body.decode(errors="replace") if isinstance(body, bytes) else body
    else:
        text = error.message
    status = getattr(error, "status_code", None)
    if isinstance(status, int) and status >= 400:
        text = f"{status} {text}"
    request_id = getattr(error, "request_id", None)
    return f"{text} (request id {request_id})" if request_id else text


def _transport_errors() -> tuple[type[BaseException], ...]:
    # Errors while reading the body come straight from the SDK's HTTP library: httpx, or httpx2 in newer
    # SDKs. Only a library the SDK has already imported can have raised one, so nothing is imported here.
    found = (getattr(sys.modules.get(name), "TransportError", None) for name in ("httpx", "httpx2"))
    return tuple(cls for cls in found if isinstance(cls, type))


def _scrub(text: str, key: str) -> str:
    # Belt and braces: an error echoing request headers (a transport error quotes the header as a bytes repr)
    # must not carry the key, in any form, into a message.
    return redact(text, [key])
