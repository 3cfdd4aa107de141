"""The built-in providers, listed in one place (Pi's ``providers/register-builtins.ts``).

:func:`builtin_providers` gives, per API, the functions that serve it; the registry
(:mod:`~pi_notebook.ai.api_registry`) registers them through its public :func:`register_api_provider` before its
first use, so this module imports nothing of the registry (no import circle). Nothing here imports a provider:
each function imports its module when first called, so importing :mod:`pi_notebook.ai` or ``%load_ext
pi_notebook`` loads no provider module, no SDK and no llama.cpp, and ``build_request`` loads only the module of
its builder (a pure ``*_convert`` module, or ``local``).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from operator import attrgetter
from typing import Any

__all__ = ["BUILTINS", "builtin_providers"]

BUILTINS = (
    ("anthropic-messages", ".anthropic:stream_anthropic", ".anthropic_convert:build_anthropic_request"),
    ("openai-completions", ".openai_completions:stream_openai_completions",
     ".openai_completions_convert:build_openai_completions_request"),
    ("openai-responses", ".openai_responses:stream_openai_responses",
     ".openai_responses_convert:build_openai_responses_request"),
    ("google-generative-ai", ".google:stream_google", ".google_convert:build_google_request"),
    ("local", ".local:stream_local", ".local:build_local_request"),
    ("faux", "..faux:provider.stream", None),  # the faux provider receives the context itself
)  # fmt: skip
"""Each built-in API, its stream function and its request builder, as ``module:attribute`` in this package."""


def builtin_providers() -> list[tuple[str, Callable[..., Any], Callable[..., Any] | None]]:
    """``(api, stream, build_request)`` of every built-in API, each function importing its module when called."""
    return [
        (api, _deferred(stream), _deferred(build_request) if build_request else None)
        for api, stream, build_request in BUILTINS
    ]


def _deferred(target: str) -> Callable[..., Any]:
    """A function that calls ``module:attribute`` (relative to this package), importing the module when called
    (once: Python keeps it)."""
    module, _, attribute = target.partition(":")
    get = attrgetter(attribute)

    def call(*args: Any) -> Any:
        return get(importlib.import_module(module, __package__))(*args)

    call.__name__ = call.__qualname__ = attribute.rpartition(".")[2]
    return call
