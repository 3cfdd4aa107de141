"""Quirks of OpenAI-compatible Chat Completions servers (Pi's ``OpenAICompletionsCompat``).

Many servers speak "the OpenAI API" with small differences: no ``store`` field, no ``developer`` role, a
``max_tokens`` field instead of ``max_completion_tokens``, thinking switched on by a vendor flag, … Pi guesses
these from the provider name and base URL (``detectCompat``) and lets ``model.compat`` override any of them
(``getCompat``). :func:`resolve_openai_compat` does both, with the rules of pi-ai 0.58.3.

``model.compat`` is read with Pi's camelCase keys (``supportsStore``) or their snake_case spelling
(``supports_store``); a key set to ``None`` counts as unset, like TypeScript's ``??``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..types import Model

__all__ = ["OpenAICompat", "compat_value", "detect_openai_compat", "resolve_openai_compat"]

# Groq serves qwen3-32b with a reasoning switch that only accepts "default" (pi-ai's detectCompat).
_GROQ_QWEN3_EFFORTS = dict.fromkeys(("minimal", "low", "medium", "high", "xhigh"), "default")


@dataclass(frozen=True)
class OpenAICompat:
    """Resolved compatibility flags of one openai-completions model (all fields set)."""

    supports_store: bool = True
    """Send ``store: false`` (servers that do not know the field may reject it)."""
    supports_developer_role: bool = True
    """Send the system prompt of a reasoning model with role ``developer`` instead of ``system``."""
    supports_reasoning_effort: bool = True
    """Send ``reasoning_effort`` when thinking is asked of a reasoning model."""
    reasoning_effort_map: dict[str, Any] = field(default_factory=dict)
    """Rewrites a thinking level into the server's own effort value (missing levels pass unchanged)."""
    supports_usage_in_streaming: bool = True
    """Send ``stream_options: {include_usage: true}`` to get token usage at the end of the stream."""
    max_tokens_field: str = "max_completion_tokens"
    """Name of the output-limit field: ``max_completion_tokens`` or ``max_tokens``."""
    requires_tool_result_name: bool = False
    """Tool messages carry the tool's ``name``."""
    requires_assistant_after_tool_result: bool = False
    """A user turn may not follow tool results directly: bridge with a short assistant turn, and send
    assistant ``content`` as ``""`` instead of ``null``."""
    requires_thinking_as_text: bool = False
    """Replay earlier thinking as plain text parts of the assistant turn instead of a reasoning field."""
    thinking_format: str = "openai"
    """How thinking is switched on: ``openai`` (``reasoning_effort``), ``zai`` / ``qwen``
    (``enable_thinking``), ``qwen-chat-template`` (``chat_template_kwargs``), ``openrouter``
    (``reasoning: {effort}``, from newer Pi)."""
    open_router_routing: Any = None
    """OpenRouter ``provider`` routing preferences, sent when the base URL is OpenRouter's."""
    vercel_gateway_routing: Any = None
    """Vercel AI Gateway ``only`` / ``order`` lists, sent as ``providerOptions.gateway``."""
    supports_strict_mode: bool = True
    """Tool definitions carry ``strict: false`` (some servers reject the unknown field)."""


def detect_openai_compat(model: Model) -> OpenAICompat:
    """The flags Pi guesses from ``model.provider`` and ``model.base_url`` alone (``detectCompat``)."""
    provider, base_url = model.provider, model.base_url or ""
    is_zai = provider == "zai" or "api.z.ai" in base_url
    is_grok = provider == "xai" or "api.x.ai" in base_url
    # Servers that reject OpenAI-only fields (`store`, the `developer` role).
    non_standard = (
        is_zai
        or is_grok
        or provider in ("cerebras", "opencode")
        or any(host in base_url for host in ("cerebras.ai", "chutes.ai", "deepseek.com", "opencode.ai"))
    )
    is_groq = provider == "groq" or "groq.com" in base_url
    return OpenAICompat(
        supports_store=not non_standard,
        supports_developer_role=not non_standard,
        supports_reasoning_effort=not is_grok and not is_zai,
        reasoning_effort_map=dict(_GROQ_QWEN3_EFFORTS) if is_groq and model.id == "qwen/qwen3-32b" else {},
        max_tokens_field="max_tokens" if "chutes.ai" in base_url else "max_completion_tokens",
        thinking_format="zai" if is_zai else "openai",
        open_router_routing={},
        vercel_gateway_routing={},
    )


def resolve_openai_compat(model: Model) -> OpenAICompat:
    """Detected flags, each overridden by ``model.compat`` when set there (Pi's ``getCompat``)."""
    detected = detect_openai_compat(model)
    overrides = model.compat or {}
    if not overrides:
        return detected

    def pick(name: str, camel: str, default: Any) -> Any:
        value = overrides.get(camel)
        if value is None:
            value = overrides.get(name)
        return default if value is None else value

    values = {}
    for name in OpenAICompat.__dataclass_fields__:
        camel = _camel(name)
        # Pi falls back to `{}` (not the detected value) for an unset OpenRouter routing.
        default = {} if name == "open_router_routing" else getattr(detected, name)
        values[name] = pick(name, camel, default)
    return OpenAICompat(**values)


def compat_value(model: Model, name: str) -> Any:
    """The raw ``model.compat`` entry ``name`` (camelCase or snake_case), or ``None`` when unset.

    Pi reads the two routing objects from ``model.compat`` itself, not from the resolved flags."""
    overrides = model.compat or {}
    value = overrides.get(_camel(name))
    return overrides.get(name) if value is None else value


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.capitalize() for part in rest)
