"""What the two OpenAI providers (Chat Completions and Responses) share: one streamed call through the ``openai``
SDK, from the client to the final event, around a translator that knows its API's events.

:func:`stream_openai` creates the client, sends the body (the provider's ``send``), reads the raw response's
events as the JSON the server sent, hands each to the translator, turns SDK and JSON failures into readable
errors with the key redacted, and closes the response and the client however the stream ends (an abort cancels
it at its await point). A provider keeps its request, its translator and the wording of its API's errors.

The SDK still decodes the server-sent events, raises for an error inside the stream and closes the connection;
:func:`json_events` only skips building a pydantic model per event, which is most of its cost per token and
which the translators do not need: they read fields with :func:`get_field`, from dicts and SDK objects alike.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any

from .._base import Number
from ..events import AssistantMessageEvent, PartialBuilder, final_event
from ..models import calculate_cost
from ..options import StreamOptions
from ..redact import redact
from ..types import AssistantMessage, Model, Usage

KEYLESS_PLACEHOLDER = "not-needed"
"""Sent as the key to servers that need none (Ollama, a local vLLM …): the SDK refuses to run without one."""
DEFAULT_MAX_RETRIES = 2
"""The SDK's own default; the ``max_retries`` option overrides it."""


def import_openai(install_hint: str) -> Any:
    """The ``openai`` module (an optional extra), or an :class:`ImportError` saying how to install it."""
    try:
        import openai
    except ImportError as e:
        raise ImportError(install_hint) from e
    return openai


class EventTranslator(ABC):
    """Turns one API's stream events into Pi's events, keeping the partial message (``builder.message``).

    A subclass handles the events (:meth:`feed`), sets ``finished`` when the API's end marker arrives, closes
    what is still open (:meth:`close_open`) and says how a cut stream reads (``truncated``)."""

    truncated: str
    """The error when the stream ends before the API's end marker: a stream cut short at an event boundary
    must not look like a complete answer."""

    def __init__(self, model: Model):
        self.model = model
        self.builder = PartialBuilder(
            AssistantMessage(content=[], api=model.api, provider=model.provider, model=model.id)
        )
        self.finished = False

    @property
    def message(self) -> AssistantMessage:
        return self.builder.message

    @abstractmethod
    def feed(self, event: Any) -> Iterator[AssistantMessageEvent]:
        """The events for one streamed event of the API (a dict, or an SDK object)."""

    @abstractmethod
    def close_open(self) -> Iterator[AssistantMessageEvent]:
        """The end events of the blocks still open."""

    def finish(self) -> Iterator[AssistantMessageEvent]:
        if not self.finished:
            raise RuntimeError(self.truncated)
        yield from self.close_open()
        yield final_event(self.message)


async def stream_openai(
    sdk: Any,
    model: Model,
    options: StreamOptions,
    key: str | None,
    params: dict[str, Any],
    send: Callable[[Any, dict[str, Any]], Awaitable[Any]],
    translator: EventTranslator,
    api_message: Callable[[dict[str, Any]], str | None],
    unit: str,
) -> AsyncIterator[AssistantMessageEvent]:
    """One call of the body ``params``: ``options.on_payload`` sees it (and may replace it), then
    ``send(client, body)`` returns the ``with_raw_response`` result of the API's ``create``, whose events
    ``translator`` turns into ours. Failures are raised as :func:`sdk_failure` words them (``api_message`` and
    ``unit`` as there)."""
    body = await options.call_on_payload(params, model)
    client = sdk.AsyncOpenAI(
        api_key=key or KEYLESS_PLACEHOLDER,
        base_url=model.base_url or None,
        default_headers={**(model.headers or {}), **(options.headers or {})},
        max_retries=(options.model_extra or {}).get("max_retries", DEFAULT_MAX_RETRIES),
    )
    try:
        try:
            raw = await send(client, body)
        except sdk.APIError as e:
            # `from None`: the SDK's own message may quote a key that a server echoed back.
            raise sdk_failure(sdk, e, key, api_message, unit) from None
        events = json_events(sdk, raw)
        try:
            yield translator.builder.start()
            try:
                async for event in events:
                    for out in translator.feed(event):
                        yield out
            except (sdk.APIError, json.JSONDecodeError) as e:
                raise sdk_failure(sdk, e, key, api_message, unit) from None
            for out in translator.finish():
                yield out
        finally:
            # Also on abort (CancelledError) and early exit: release the connection at once.
            await events.close()
    finally:
        await client.close()


def cached_input_usage(
    model: Model, input_tokens: Number, cached: Number, output: Number, total: Number | None = None
) -> Usage:
    """Usage as both APIs count it: the cached tokens are part of ``input_tokens``, so our input excludes them;
    ``total`` as reported, or the sum of the parts. The cost comes from the model's prices."""
    fresh = input_tokens - cached
    usage = Usage(
        input=fresh,
        output=output,
        cache_read=cached,
        cache_write=0,
        total_tokens=fresh + output + cached if total is None else total,
    )
    calculate_cost(model, usage)
    return usage


def json_events(sdk: Any, raw: Any) -> Any:
    """The SDK's stream of a ``with_raw_response`` call, each event left as its parsed JSON (a dict). An SDK
    that cannot parse to another type gives its typed events."""
    try:
        return raw.parse(to=sdk.AsyncStream[object])
    except TypeError:
        return raw.parse()


def get_field(obj: Any, name: str) -> Any:
    """A field of an event or part of one: a dict's key, an SDK object's attribute (extra fields included);
    ``None`` when absent."""
    if obj is None:
        return None
    if isinstance(obj, dict):
        return obj.get(name)
    return getattr(obj, name, None)


def sdk_failure(
    sdk: Any, error: Exception, key: str | None, api_message: Callable[[dict[str, Any]], str | None], unit: str
) -> RuntimeError:
    """A readable error for an ``openai`` SDK failure: status and the API's message (a text body, or
    ``api_message(body)`` of a JSON object: each API words it its own way), the cause of a connection error, or
    what was wrong with a streamed ``unit`` ("chunk", "event"). The key is redacted in every form (a transport
    error quotes the header as a bytes repr), in case the SDK or a server echoes it."""
    if isinstance(error, sdk.APIStatusError):
        text = f"{error.status_code} {_body_message(error.body, api_message) or 'status code (no body)'}"
    elif isinstance(error, sdk.APIConnectionError):
        cause = error.__cause__ or error.__context__
        text = f"{error.message.rstrip('.')}: {cause}" if cause is not None and str(cause) else error.message
    elif isinstance(error, sdk.APIError):  # an error object inside the stream
        text = _body_message(error.body, api_message) or error.message
        code = error.body.get("code") if isinstance(error.body, dict) else None
        text = f"{text} (code {code})" if code is not None else text
    elif isinstance(error, json.JSONDecodeError):
        text = f"Malformed {unit} in the response stream ({error.msg}): {error.doc[:200]!r}"
    else:
        text = str(error)
    return RuntimeError(redact(text, [key], marker="***"))


def _body_message(body: Any, api_message: Callable[[dict[str, Any]], str | None]) -> str | None:
    if isinstance(body, str):
        return body.strip()[:1000] or None
    return api_message(body) if isinstance(body, dict) else None
