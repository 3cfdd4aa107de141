"""What the two OpenAI providers (Chat Completions and Responses) share in reading a stream from the ``openai``
SDK: the events left as the JSON the server sent, and one way to read a field of them.

The SDK still decodes the server-sent events, raises for an error inside the stream and closes the connection;
:func:`json_events` only skips building a pydantic model per event, which is most of its cost per token and
which the translators do not need: they read fields with :func:`get_field`, from dicts and SDK objects alike.
"""

from __future__ import annotations

from typing import Any


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
