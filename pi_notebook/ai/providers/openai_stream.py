"""What the two OpenAI providers (Chat Completions and Responses) share in reading a stream from the ``openai``
SDK: the events left as the JSON the server sent, and one way to read a field of them.

The SDK still decodes the server-sent events, raises for an error inside the stream and closes the connection;
:func:`json_events` only skips building a pydantic model per event, which is most of its cost per token and
which the translators do not need: they read fields with :func:`get_field`, from dicts and SDK objects alike.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from ..redact import redact


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
    sdk: Any, error: Exception, key: str | None, api_message: Callable[[Any], str | None], unit: str
) -> RuntimeError:
    """A readable error for an ``openai`` SDK failure: status and the API's message (``api_message(body)``, each
    API words its body its own way), the cause of a connection error, or what was wrong with a streamed ``unit``
    ("chunk", "event"). The key is redacted in every form (a transport error quotes the header as a bytes repr),
    in case the SDK or a server echoes it."""
    if isinstance(error, sdk.APIStatusError):
        text = f"{error.status_code} {api_message(error.body) or 'status code (no body)'}"
    elif isinstance(error, sdk.APIConnectionError):
        cause = error.__cause__ or error.__context__
        text = f"{error.message.rstrip('.')}: {cause}" if cause is not None and str(cause) else error.message
    elif isinstance(error, sdk.APIError):  # an error object inside the stream
        text = api_message(error.body) or error.message
        code = error.body.get("code") if isinstance(error.body, dict) else None
        text = f"{text} (code {code})" if code is not None else text
    elif isinstance(error, json.JSONDecodeError):
        text = f"Malformed {unit} in the response stream ({error.msg}): {error.doc[:200]!r}"
    else:
        text = str(error)
    return RuntimeError(redact(text, [key], marker="***"))
