"""The providers, one per API, found by ``model.api`` (Pi's ``api-registry.ts``).

An :class:`ApiProvider` holds what one wire protocol needs: the stream function that makes a call and, for the
inspector, the pure function that builds its request body. :func:`~pi_notebook.ai.streaming.stream` and
:func:`~pi_notebook.ai.request.build_request` both look the model's API up here. The built-in APIs are
registered in one place, :mod:`.providers.register_builtins`, through the same :func:`register_api_provider`
that anyone else uses, before the first lookup or registration (so a registration of yours replaces a
built-in, never the reverse).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, replace
from typing import Any

from .events import AssistantMessageEvent
from .options import StreamOptions
from .types import Context, Model

StreamFunction = Callable[[Model, Context, StreamOptions], AsyncIterator[AssistantMessageEvent]]
"""``stream(model, context, options)``: one call, as an async iterator of events (it raises on failure; the
caller turns that into a terminal ``error`` event)."""
RequestBuilder = Callable[[Model, Context, StreamOptions], dict[str, Any]]
"""``build(model, context, options)``: the exact request body, with no I/O and no key."""


@dataclass(frozen=True)
class ApiProvider:
    """What serves the models of one API."""

    api: str
    """The ``model.api`` it serves, e.g. ``"openai-completions"``."""
    stream: StreamFunction | None
    """Makes one call; ``None`` for an API known only by its request body (``stream()`` refuses it)."""
    build_request: RequestBuilder | None = None
    """The request body it would send; ``None`` when it sends none (the faux provider receives the context)."""


class UnknownApiError(LookupError):
    """No provider is registered for a model's ``api``."""


_providers: dict[str, ApiProvider] = {}
_builtins_registered = False


def _registry() -> dict[str, ApiProvider]:
    """The table, with the built-ins in it first."""
    global _builtins_registered
    if not _builtins_registered:
        _builtins_registered = True
        from .providers.register_builtins import builtin_providers

        for api, stream, build_request in builtin_providers():
            register_api_provider(ApiProvider(api=api, stream=stream, build_request=build_request))
    return _providers


def register_api_provider(provider: ApiProvider) -> None:
    """Make ``provider`` serve every model whose ``api`` is ``provider.api`` (replacing any provider before)."""
    _registry()[provider.api] = provider


def get_api_provider(api: str) -> ApiProvider:
    """The provider of ``api``; :class:`UnknownApiError` with Pi's text when there is none."""
    try:
        return _registry()[api]
    except KeyError:
        raise _unknown(api) from None


def list_api_providers() -> list[ApiProvider]:
    """Every registered provider, built-ins first."""
    return list(_registry().values())


def stream_function_for(api: str) -> StreamFunction:
    """The stream function of ``api``'s provider; :class:`UnknownApiError` when it has none."""
    stream = get_api_provider(api).stream
    if stream is None:
        raise _unknown(api)
    return stream


def request_builder_for(api: str) -> RequestBuilder | None:
    """The request builder of ``api``'s provider; ``None`` when it has none or no provider serves ``api``."""
    provider = _registry().get(api)
    return provider.build_request if provider is not None else None


def register_provider(api: str, stream_fn: StreamFunction) -> None:
    """Make ``stream_fn(model, context, options)`` serve every model whose ``api`` is ``api`` (a request
    builder registered for ``api`` stays)."""
    _update(api, stream=stream_fn)


def register_request_builder(api: str, builder: RequestBuilder) -> None:
    """Make ``build_request`` work for models whose ``api`` is ``api`` (a stream function registered for
    ``api`` stays)."""
    _update(api, build_request=builder)


def _update(api: str, **fields: Any) -> None:
    current = _registry().get(api) or ApiProvider(api=api, stream=None)
    register_api_provider(replace(current, **fields))


def _unknown(api: str) -> UnknownApiError:
    return UnknownApiError(f"No API provider registered for api: {api}")
