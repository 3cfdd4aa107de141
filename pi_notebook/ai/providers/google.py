"""The ``google-generative-ai`` transport: one streamed Gemini call through the official ``google-genai`` SDK.

The request comes from :func:`~.google_convert.build_google_request` (pure, Pi's ``onPayload`` shape); this module
hands it to ``client.aio.models.generate_content_stream`` (the SDK sends ``POST
{base_url}/models/{id}:streamGenerateContent?alt=sse``) and translates the streamed ``GenerateContentResponse``
chunks into our events, as Pi's ``streamGoogle`` does:

* ``start`` with the first chunk. Text parts stream into a text block, ``thought: true`` parts into a thinking
  block; a new block opens when the kind changes. A part's ``thoughtSignature`` is kept on its block
  (``text_signature`` / ``thinking_signature``; the last non-empty one wins), as standard base64, so that it can
  be replayed. A ``functionCall`` closes the open block and is one ``toolcall_start`` / ``toolcall_delta`` (its
  arguments as JSON) / ``toolcall_end``, with the call's own signature in ``thought_signature``; a call without id
  (or with a repeated one) gets ``<name>_<ms>_<n>``.
* Stop: ``STOP`` → stop, ``MAX_TOKENS`` → length, any other finish reason → error; a response with tool calls →
  toolUse. Usage: input = prompt − cached, output = candidates + thoughts, cache read = cached, total as reported;
  cost from the model's prices.

Beyond Pi @83378aad (each pinned in tests/ai/test_google_stream.py): input tokens exclude the cached ones (Pi
counted them twice; newer Pi agrees); a stream that ends without a finish reason is an error, not a complete
answer; an error finish reason and a blocked prompt say which (Pi: ``An unknown error occurred``, or an empty
``stop``); an error finish stays an error when the response holds tool calls (Pi reports ``toolUse``, and the
calls of a blocked or cut response would run). Thought signatures arrive from the Python SDK as bytes and are
stored as standard base64, the form Pi stores and checks before replaying them.

The base URL is Pi's (``https://generativelanguage.googleapis.com/v1beta``, version included); a URL without a
version (a ``GOOGLE_GEMINI_BASE_URL`` proxy) gets ``v1beta`` appended, Pi's version, not the Python SDK's ``v1``.

Failures (HTTP status with Google's message, a dropped connection, a malformed chunk) are raised with the key
redacted and become the terminal ``error`` event in :func:`~pi_notebook.ai.streaming.stream`, keeping the partial
message; an abort cancels this generator at its await point, which closes the connection. The SDK retries 408,
429 and 5xx answers and connection failures before the stream starts: ``max_retries`` (an extra option, default 2)
times, waiting ``retry_base_delay_ms`` (default 1000) doubling, at most ``max_retry_delay_ms``. The SDK is
imported only when a call is made, so the package works without the ``google`` extra.
"""

from __future__ import annotations

import base64
import itertools
import json
import re
import sys
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import urlsplit

from .._base import now_ms
from ..events import AssistantMessageEvent, PartialBuilder, final_event
from ..jstext import js_json_stringify
from ..keys import require_api_key
from ..models import calculate_cost
from ..options import StreamOptions
from ..redact import redact
from ..types import AssistantMessage, Context, Model, StopReason, TextContent, ThinkingContent, ToolCall
from .google_convert import build_google_request

__all__ = [
    "DEFAULT_API_VERSION",
    "INSTALL_HINT",
    "GoogleStreamError",
    "api_version_for",
    "map_finish_reason",
    "stream_google",
]

INSTALL_HINT = (
    "The google-generative-ai provider needs Google's SDK, which is not installed: pip install 'pi_notebook[google]'"
)
"""The error message when the ``google-genai`` package is not installed."""

DEFAULT_API_VERSION = "v1beta"
"""The Gemini API version for a base URL that names none (Pi's: thinking, thought signatures)."""

_DEFAULT_MAX_RETRIES = 2  # as the other providers' SDKs; google-genai itself retries nothing unless asked
_DEFAULT_RETRY_BASE_DELAY_MS = 1000  # google-genai's own first delay
_VERSION_SEGMENT = re.compile(r"/v\d+(?:[a-z]+\d*)?/?$")
_tool_call_counter = itertools.count(1)


class GoogleStreamError(RuntimeError):
    """A failed Gemini call; the message is what the final assistant message reports."""


def map_finish_reason(reason: str) -> StopReason:
    """Our stop reason for a Gemini finish reason: ``STOP`` → stop, ``MAX_TOKENS`` → length, anything else (safety,
    recitation, a malformed function call, a reason this code does not know yet) → error."""
    if reason == "STOP":
        return "stop"
    if reason == "MAX_TOKENS":
        return "length"
    return "error"


def api_version_for(base_url: str) -> str:
    """The ``api_version`` to give the SDK for ``base_url``: ``""`` when the URL already ends in a version
    (Pi's convention, ``…/v1beta``), else ``v1beta``, the version Pi's SDK uses (the Python SDK's own default is
    ``v1``), for a bare host such as a ``GOOGLE_GEMINI_BASE_URL`` proxy or no base URL at all."""
    return "" if base_url and _VERSION_SEGMENT.search(urlsplit(base_url).path) else DEFAULT_API_VERSION


async def stream_google(model: Model, context: Context, options: StreamOptions) -> AsyncIterator[AssistantMessageEvent]:
    """Stream one Gemini response as Pi's events (the provider of api ``google-generative-ai``).

    Extra options: ``max_retries`` (default 2), ``retry_base_delay_ms`` (default 1000) and ``tool_choice``
    (``"auto"``, ``"none"``, ``"any"``). ``options.on_payload(params, model)`` sees the exact params (and may
    return a replacement, as in Pi).
    """
    genai, types = _import_sdk()
    key = require_api_key(model.provider, options.api_key) or ""
    params = build_google_request(model, context, options, tool_choice=options.tool_choice)
    params = await options.call_on_payload(params, model)  # as in Pi, it may return a replacement

    translation = _Translation(model)
    try:
        client = genai.Client(api_key=key, vertexai=False, http_options=_http_options(model, options, types))
    except Exception as e:
        raise GoogleStreamError(redact(_describe(e), [key])) from None
    try:
        # Automatic function calling runs Python callables; our tools are declarations only: skip its machinery.
        config = dict(params.get("config") or {})
        if "automatic_function_calling" not in config:
            config.setdefault("automaticFunctionCalling", {"disable": True})
        chunks = await client.aio.models.generate_content_stream(
            model=params["model"], contents=params["contents"], config=config
        )
        try:
            async for chunk in chunks:
                for event in translation.handle(chunk):
                    yield event
        finally:
            await chunks.aclose()  # also on abort (CancelledError): the connection is released at once
    except Exception as e:
        # `from None`: the SDK's exception may quote a server's echo of the request; only this text survives.
        raise GoogleStreamError(redact(_describe(e), [key])) from None
    finally:
        client.close()
        await client.aio.aclose()
    for event in translation.finish():
        yield event


def _import_sdk() -> tuple[Any, Any]:
    try:
        from google import genai
        from google.genai import types
    except ImportError as e:
        raise ImportError(INSTALL_HINT) from e
    return genai, types


def _extra(options: StreamOptions, name: str, default: Any) -> Any:
    value = (options.model_extra or {}).get(name)
    return default if value is None else value


def _http_options(model: Model, options: StreamOptions, types: Any) -> Any:
    settings: dict[str, Any] = {"api_version": api_version_for(model.base_url)}
    if model.base_url:
        settings["base_url"] = model.base_url
    headers = {**(model.headers or {}), **(options.headers or {})}
    if headers:
        settings["headers"] = headers
    retries = int(_extra(options, "max_retries", _DEFAULT_MAX_RETRIES))
    if retries > 0:
        delay = _extra(options, "retry_base_delay_ms", _DEFAULT_RETRY_BASE_DELAY_MS) / 1000
        settings["retry_options"] = types.HttpRetryOptions(
            attempts=retries + 1,
            initial_delay=delay,
            jitter=delay,
            max_delay=max(delay, options.max_retry_delay_ms / 1000),
        )
    return types.HttpOptions(**settings)


class _Translation:
    """The partial message built from the SDK's chunks, and the events it produces."""

    def __init__(self, model: Model):
        self.model = model
        message = AssistantMessage(api=model.api, provider=model.provider, model=model.id)
        self.builder = PartialBuilder(message)
        self.started = False
        self.open: int | None = None  # index of the open text or thinking block
        self.finish_reason: str | None = None
        self.blocked: str | None = None
        self.counts: tuple[Any, ...] = ()  # the last usage counts seen

    def handle(self, chunk: Any) -> list[AssistantMessageEvent]:
        """The events of one chunk (a list: cheaper than nested generators, and this runs for every chunk)."""
        events: list[AssistantMessageEvent] = []
        if not self.started:
            self.started = True
            events.append(self.builder.start())
        candidates = chunk.candidates
        candidate = candidates[0] if candidates else None
        content = candidate.content if candidate is not None else None
        for part in (content.parts if content is not None else None) or ():
            if part.text is not None:
                self._text(part, events)
            if part.function_call is not None:
                self._function_call(part, events)
        if candidate is not None and candidate.finish_reason:
            reason = candidate.finish_reason
            self.finish_reason = str(getattr(reason, "value", reason))
        feedback = chunk.prompt_feedback
        if feedback is not None and feedback.block_reason:
            reason = feedback.block_reason
            self.blocked = str(getattr(reason, "value", reason))
            if feedback.block_reason_message:
                self.blocked += f" ({feedback.block_reason_message})"
        if chunk.usage_metadata is not None:
            self._usage(chunk.usage_metadata)
        return events

    def finish(self) -> list[AssistantMessageEvent]:
        """The end of the open block and the terminal event; raises for a blocked prompt or a cut stream."""
        message = self.builder.message
        if self.blocked is not None:
            raise GoogleStreamError(f"Gemini blocked the prompt: {self.blocked}")
        if self.finish_reason is None:
            # A proxy that closes the connection cleanly mid-answer must not look like a complete answer.
            raise GoogleStreamError("Gemini's stream ended without a finish reason (the response may be truncated)")
        events: list[AssistantMessageEvent] = []
        self._close_open(events)
        stop = map_finish_reason(self.finish_reason)
        if stop == "error":
            message.error_message = f"Gemini stopped with finish reason {self.finish_reason}"
        elif any(isinstance(block, ToolCall) for block in message.content):
            stop = "toolUse"
        message.stop_reason = stop
        events.append(final_event(message))
        return events

    def _close_open(self, events: list[AssistantMessageEvent]) -> None:
        if self.open is not None:
            events.append(self.builder.close(self.open))
            self.open = None

    def _text(self, part: Any, events: list[AssistantMessageEvent]) -> None:
        thinking = part.thought is True
        blocks = self.builder.message.content
        index = self.open
        block = blocks[index] if index is not None else None
        if index is None or block is None or isinstance(block, ThinkingContent) != thinking:
            self._close_open(events)
            block = ThinkingContent(thinking="") if thinking else TextContent(text="")
            events.append(self.builder.open(block))
            index = self.open = len(blocks) - 1
        signature = _signature(part.thought_signature)
        if signature:  # some backends sign only the first delta of a block: keep the last non-empty one
            if thinking:
                block.thinking_signature = signature
            else:
                block.text_signature = signature
        events.append(self.builder.delta(index, part.text))

    def _function_call(self, part: Any, events: list[AssistantMessageEvent]) -> None:
        self._close_open(events)
        call = part.function_call
        name = call.name or ""
        blocks = self.builder.message.content
        call_id = call.id
        if not call_id or any(isinstance(b, ToolCall) and b.id == call_id for b in blocks):
            call_id = f"{name}_{now_ms()}_{next(_tool_call_counter)}"
        block = ToolCall(id=call_id, name=name, arguments={}, thought_signature=_signature(part.thought_signature))
        events.append(self.builder.open(block))
        index = len(blocks) - 1
        events.append(self.builder.delta(index, js_json_stringify(call.args or {})))
        events.append(self.builder.close(index))

    def _usage(self, raw: Any) -> None:
        prompt, candidates, thoughts = raw.prompt_token_count, raw.candidates_token_count, raw.thoughts_token_count
        cached, total = raw.cached_content_token_count, raw.total_token_count
        counts = (prompt, candidates, thoughts, cached, total)
        if counts == self.counts:  # Gemini repeats the usage so far on every chunk
            return
        self.counts = counts
        usage = self.builder.message.usage
        cached = cached or 0
        # The prompt count includes the cached tokens (this runs for every chunk: no per-attribute setattr).
        usage.set_numbers(
            input=(prompt or 0) - cached,
            output=(candidates or 0) + (thoughts or 0),
            cache_read=cached,
            total_tokens=total or 0,
        )
        calculate_cost(self.model, usage)


def _signature(raw: bytes | str | None) -> str | None:
    """A thought signature as standard base64 (the SDK hands bytes; Pi stores the wire's base64 string)."""
    if not raw:
        return None
    if isinstance(raw, str):
        return raw
    return base64.b64encode(raw).decode("ascii")


def _describe(error: Exception) -> str:
    """A one-line text for a failure of the SDK, the connection or the stream."""
    sdk_errors = sys.modules.get("google.genai.errors")
    if sdk_errors is not None and isinstance(error, sdk_errors.APIError):
        return _api_error_text(error)
    if sdk_errors is not None and isinstance(error, getattr(sdk_errors, "UnknownApiResponseError", ())):
        return f"Malformed chunk in Gemini's stream: {_shorten(str(error))}"
    if isinstance(error, json.JSONDecodeError):
        return f"Malformed chunk in Gemini's stream: {error}"
    if isinstance(error, _transport_errors()):
        return f"Connection error: {error}" if str(error) else f"Connection error: {type(error).__name__}"
    text = "; ".join(line.strip() for line in str(error).splitlines() if line.strip())
    return _shorten(text, 500) if text else type(error).__name__


def _api_error_text(error: Any) -> str:
    """``<code> <STATUS>: <Google's message>`` (an error sent mid-stream has a code too)."""
    head = " ".join(str(p) for p in (error.code, error.status) if p)
    message = error.message
    if not message:
        details = error.details
        message = json.dumps(details)[:1000] if isinstance(details, (dict, list)) else str(details or "")
    return f"{head}: {message}" if head and message else head or message or "Gemini API error"


def _shorten(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


def _transport_errors() -> tuple[type[BaseException], ...]:
    # Errors while reading the body come straight from the SDK's HTTP library (httpx2, httpx or aiohttp). Only a
    # library the SDK has already imported can have raised one, so nothing is imported here.
    found = [getattr(sys.modules.get(name), "TransportError", None) for name in ("httpx2", "httpx")]
    found.append(getattr(sys.modules.get("aiohttp"), "ClientError", None))
    return tuple(cls for cls in found if isinstance(cls, type))
