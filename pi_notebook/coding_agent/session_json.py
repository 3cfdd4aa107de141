"""A session's message lines typed straight from their bytes.

A message entry keeps its line as the file holds it (:class:`~.session_entries.SessionMessageEntry`) and types
its message when first used. The standard path parses the line into dicts (``JSON.parse``) and validates those
(:func:`~pi_notebook.agent_core.from_pi_json`): two passes, and Python objects built only to be thrown away.
Here pydantic-core validates the line's JSON itself into the message classes (one pass, no intermediate
dicts), through an adapter over ``{"message": <the registered roles' union>}`` that ignores the entry's other
keys. It gives exactly the messages the standard path gives; where it cannot (a role nobody registered, a
message that does not validate, JSON that pydantic-core's parser refuses but ``JSON.parse`` takes), it says so
with ``None`` and the caller takes the standard path, which types, reports and keeps what it must.

Measured (``python -m tests.benchmarks --only P1,P5``): about 0.8 of the standard path's time. Loading a file
keeps its own parse of every line (jiter, for the ids): reading only those keys through pydantic-core was tried
and was no faster, as pydantic-core parses the whole line before it validates.
"""

from __future__ import annotations

import threading
from typing import Annotated, Any, Union

from pydantic import Field, TypeAdapter
from typing_extensions import TypedDict

from ..agent_core import message_type, registered_message_types, registry_version
from ..ai import describe_pending

_lock = threading.Lock()
_cached: tuple[int, Any] | None = None  # (registry version, the validator of {"message": union})


def _validator() -> Any:
    """The compiled validator of an entry line's ``message``, rebuilt when a role is registered."""
    global _cached
    cached, version = _cached, registry_version()
    if cached is not None and cached[0] == version:
        return cached[1]
    with _lock:
        describe_pending()  # the classes' field descriptions, before their schemas are built here
        classes = tuple(t.model for t in registered_message_types())
        union = Union[classes] if len(classes) > 1 else classes[0]  # noqa: UP007 - built at run time
        # The union is built at run time from the registry: no static type describes it.
        fields = {"message": Annotated[union, Field(discriminator="role")]}
        line_type: Any = TypedDict("_MessageLine", fields)  # type: ignore[misc]
        validator = TypeAdapter(line_type).validator
        _cached = (version, validator)
        return validator


def message_from_line(line: Any, role: Any) -> Any:
    """The typed message of a message entry's ``line`` (its JSON as UTF-8 bytes) whose message has ``role``;
    ``None`` where this path cannot type it exactly as :func:`~pi_notebook.agent_core.from_pi_json` of the
    parsed line would (then the caller parses and types it the standard way)."""
    if type(line) is not bytes or type(role) is not str or message_type(role) is None:
        return None
    try:
        return _validator().validate_json(line)["message"]
    except (ValueError, RecursionError):  # not valid to it (pydantic's ValidationError is a ValueError)
        return None
