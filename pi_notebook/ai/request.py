"""``build_request()``: the exact body a provider would send for a model and a context (what Pi's
``onPayload`` hook sees), as a pure function: no network, no key needed. The inspector shows it."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from .options import StreamOptions
from .types import Context, Model

RequestBuilder = Callable[[Model, Context, StreamOptions], dict[str, Any]]

# Built-in builders, imported on first use (module, function).
_PROVIDERS = "pi_notebook.ai.providers."
_BUILTIN = {
    "anthropic-messages": (_PROVIDERS + "anthropic_convert", "build_anthropic_request"),
    "openai-completions": (_PROVIDERS + "openai_completions_convert", "build_openai_completions_request"),
    "google-generative-ai": (_PROVIDERS + "google_convert", "build_google_request"),
    "openai-responses": (_PROVIDERS + "openai_responses_convert", "build_openai_responses_request"),
    "local": (_PROVIDERS + "local", "build_local_request"),
}
_builders: dict[str, RequestBuilder] = {}


def register_request_builder(api: str, builder: RequestBuilder) -> None:
    """Make ``build_request`` work for models whose ``api`` is ``api``."""
    _builders[api] = builder


def _builder_for(api: str) -> RequestBuilder | None:
    if api not in _builders and api in _BUILTIN:
        module, name = _BUILTIN[api]
        _builders[api] = getattr(importlib.import_module(module), name)
    return _builders.get(api)


def build_request(
    model: Model,
    context: Context | dict[str, Any],
    options: StreamOptions | dict[str, Any] | None = None,
    **kw: Any,
) -> dict[str, Any]:
    """The request body for ``model``'s API. For an API without a builder (e.g. the faux provider, which
    receives the context itself) this is the context as Pi's JSON."""
    ctx = context if isinstance(context, Context) else Context.model_validate(context)
    opts = StreamOptions.coerce(options, **kw)
    builder = _builder_for(model.api)
    if builder is None:
        return ctx.to_pi_json()
    return builder(model, ctx, opts)
