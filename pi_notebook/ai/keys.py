"""API keys: which environment variable holds each provider's key, and how a key is chosen.

The order follows Pi's ``getEnvApiKey`` (``packages/ai/src/env-api-keys.ts``): an explicit key wins, then
the provider's environment variables in order (for Anthropic ``ANTHROPIC_OAUTH_TOKEN`` before
``ANTHROPIC_API_KEY``); an empty variable counts as unset. Keys are stripped of surrounding whitespace when
read (a key read from a file keeps its trailing newline, which no HTTP header may carry), so a key of blanks
counts as unset too. Keys are never put into a repr, an error message or a log line: errors name the
*variable*, never its value (and :mod:`~pi_notebook.ai.redact` blanks a key out of any error text).
"""

from __future__ import annotations

import os
from typing import Any

__all__ = [
    "ENV_VARS",
    "KEYLESS_PROVIDERS",
    "MissingApiKeyError",
    "get_env_api_key",
    "require_api_key",
    "resolve_api_key",
]

ENV_VARS: dict[str, tuple[str, ...]] = {
    "anthropic": ("ANTHROPIC_OAUTH_TOKEN", "ANTHROPIC_API_KEY"),
    "openai": ("OPENAI_API_KEY",),
    "azure-openai-responses": ("AZURE_OPENAI_API_KEY",),
    # Pi reads GEMINI_API_KEY; Google's own SDKs also read GOOGLE_API_KEY, second here (Pi's variable wins).
    "google": ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
    "groq": ("GROQ_API_KEY",),
    "cerebras": ("CEREBRAS_API_KEY",),
    "xai": ("XAI_API_KEY",),
    "openrouter": ("OPENROUTER_API_KEY",),
    "vercel-ai-gateway": ("AI_GATEWAY_API_KEY",),
    "zai": ("ZAI_API_KEY",),
    "mistral": ("MISTRAL_API_KEY",),
    "minimax": ("MINIMAX_API_KEY",),
    "minimax-cn": ("MINIMAX_CN_API_KEY",),
    "huggingface": ("HF_TOKEN",),
    "opencode": ("OPENCODE_API_KEY",),
    "kimi-coding": ("KIMI_API_KEY",),
    "github-copilot": ("COPILOT_GITHUB_TOKEN", "GH_TOKEN", "GITHUB_TOKEN"),
    # Not a Pi provider: any server speaking the OpenAI API. The OpenAI SDK pairs OPENAI_BASE_URL with
    # OPENAI_API_KEY, so that is where a key for it is looked up; many such servers need none.
    "openai-compatible": ("OPENAI_API_KEY",),
}
"""Provider → the environment variables holding its key, in the order they are tried."""

KEYLESS_PROVIDERS: frozenset[str] = frozenset({"ollama", "local", "faux", "openai-compatible"})
"""Providers that work without a key (``openai-compatible`` uses one only if it is set)."""

# The variable an error message asks for, when the provider reads several (the others are mentioned too).
_PRIMARY: dict[str, str] = {"anthropic": "ANTHROPIC_API_KEY"}


class MissingApiKeyError(RuntimeError):
    """No key was passed and the provider's environment variable is not set.

    The message names the variable to set and the ways to set it; it never contains a key.
    """

    def __init__(self, provider: str, env_var: str | None = None):
        self.provider = provider
        """The provider that needs a key."""
        self.env_var = env_var
        """The environment variable to set (``None`` for a provider without a known variable)."""
        super().__init__(_missing_key_message(provider, env_var))


def _missing_key_message(provider: str, env_var: str | None) -> str:
    head = f"No API key for provider {provider!r}."
    if env_var is None:
        return f"{head} Pass api_key=... (no environment variable is known for this provider)."
    others = [v for v in ENV_VARS.get(provider, ()) if v != env_var]
    alternatives = f" (or {' / '.join(others)})" if others else ""
    return (
        f"{head} Set {env_var}{alternatives} in the environment (e.g. in the shell that starts Jupyter, "
        f"or `%env {env_var}=...` — but prefer not to type keys into notebooks), or pass api_key=..."
    )


def _secret_value(value: Any) -> str | None:
    # Accept pydantic's SecretStr (StreamOptions.api_key) without importing pydantic here.
    getter = getattr(value, "get_secret_value", None)
    value = getter() if callable(getter) else value
    return value.strip() if isinstance(value, str) else value


def get_env_api_key(provider: str) -> str | None:
    """The key for ``provider`` from its environment variables (first non-blank one, stripped), or ``None``."""
    for name in ENV_VARS.get(provider, ()):
        value = (os.environ.get(name) or "").strip()
        if value:
            return value
    return None


def resolve_api_key(provider: str, explicit: Any = None) -> str | None:
    """``explicit`` (a ``str`` or ``SecretStr``, stripped) if non-blank, else :func:`get_env_api_key`."""
    value = _secret_value(explicit)
    if value:
        return value
    return get_env_api_key(provider)


def require_api_key(provider: str, explicit: Any = None) -> str | None:
    """Like :func:`resolve_api_key`, but raise :class:`MissingApiKeyError` when a needed key is missing.

    Providers in :data:`KEYLESS_PROVIDERS` return ``None`` (or their optional key) without error.
    """
    key = resolve_api_key(provider, explicit)
    if key or provider in KEYLESS_PROVIDERS:
        return key
    names = ENV_VARS.get(provider)
    env_var = _PRIMARY.get(provider, names[0]) if names else None
    raise MissingApiKeyError(provider, env_var)
