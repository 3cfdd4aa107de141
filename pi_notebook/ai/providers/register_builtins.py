"""The built-in providers, registered in one place (Pi's ``providers/register-builtins.ts``).

Each is registered through the public :func:`~pi_notebook.ai.api_registry.register_api_provider`. Nothing here
imports a provider: each function registered below imports its module when first called, so importing
:mod:`pi_notebook.ai` or ``%load_ext pi_notebook`` loads no provider module, no SDK and no llama.cpp, and
``build_request`` loads only the module of its builder (a pure ``*_convert`` module, or ``local``).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from operator import attrgetter
from typing import Any

from ..api_registry import ApiProvider, register_api_provider

__all__ = ["register_builtins"]


def register_builtins() -> None:
    """Register every built-in API (the registry calls this before its first use)."""
    for api, stream, build_request in (
        ("anthropic-messages", ".anthropic:stream_anthropic", ".anthropic_convert:build_anthropic_request"),
        ("openai-completions", ".openai_completions:stream_openai_completions",
         ".openai_completions_convert:build_openai_completions_request"),
        ("openai-responses", ".openai_responses:stream_openai_responses",
         ".openai_responses_convert:build_openai_responses_request"),
        ("google-generative-ai", ".google:stream_google", ".google_convert:build_google_request"),
        ("local", ".local:stream_local", ".local:build_local_request"),
        ("faux", "..faux:provider.stream", None),  # the faux provider receives the context itself
    ):  # fmt: skip
        builder = _deferred(build_request) if build_request else None
        register_api_provider(ApiProvider(api=api, stream=_deferred(stream), build_request=builder))


def _deferred(target: str) -> Callable[..., Any]:
    """A function that calls ``module:attribute`` (relative to this package), importing the module when called
    (once: Python keeps it)."""
    module, _, attribute = target.partition(":")
    get = attrgetter(attribute)

    def call(*args: Any) -> Any:
        return get(importlib.import_module(module, __package__))(*args)

    call.__name__ = call.__qualname__ = attribute.rpartition(".")[2]
    return call
