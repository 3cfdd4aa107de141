"""Options of one LLM call (Pi's ``SimpleStreamOptions``), in snake_case.

The API key is held in a :class:`pydantic.SecretStr`: it never shows in a repr, a log line or a dump.
"""

from __future__ import annotations

import inspect
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, SecretStr

from ._base import describe_fields
from .types import CacheRetention, Model, ThinkingLevel


class StreamOptions(BaseModel):
    """What a caller may set for one LLM call. Unknown options are kept (``extra="allow"``)."""

    # Built on first use, not at import; the field docstrings are read by describe_fields() below.
    model_config = ConfigDict(extra="allow", arbitrary_types_allowed=True, defer_build=True)

    reasoning: ThinkingLevel | None = None
    """Thinking effort; ``None`` turns thinking off."""
    thinking_budgets: dict[str, int] | None = None
    """Token budgets per thinking level (``minimal``, ``low``, ``medium``, ``high``)."""
    api_key: SecretStr | None = None
    """The provider key; when absent the provider reads its environment variable."""
    temperature: float | None = None
    """Sampling temperature."""
    max_tokens: int | None = None
    """Output token limit; each provider has its own default."""
    cache_retention: CacheRetention | None = None
    """Prompt-cache retention (default ``short``)."""
    session_id: str | None = None
    """Session id, for providers that cache per session."""
    headers: dict[str, str] | None = None
    """Extra HTTP headers."""
    metadata: dict[str, Any] | None = None
    """Provider metadata (e.g. Anthropic ``user_id``)."""
    tool_choice: Any = None
    """Provider-specific tool choice, passed through."""
    max_retry_delay_ms: int = 60_000
    """Longest server-requested retry delay to honour."""
    signal: Any = Field(default=None, exclude=True)
    """Cancellation: an object with ``is_set()`` (e.g. :class:`asyncio.Event`); set means abort."""
    on_payload: Any = Field(default=None, exclude=True)
    """``on_payload(payload, model)`` sees the exact request body before it is sent."""

    @classmethod
    def coerce(cls, options: StreamOptions | dict[str, Any] | None = None, **kwargs: Any) -> StreamOptions:
        """Accept a StreamOptions, a dict (snake_case or Pi's camelCase keys) and/or keyword options."""
        if isinstance(options, StreamOptions):
            return options.model_copy(update=kwargs) if kwargs else options
        data = {_snake(k): v for k, v in (options or {}).items()}
        data.update(kwargs)
        return cls(**data)

    async def call_on_payload(self, payload: dict[str, Any], model: Model) -> dict[str, Any]:
        """Pi's ``onPayload`` step: ``on_payload(payload, model)`` sees the body (awaited when it returns an
        awaitable); what it returns, unless ``None``, is the body sent instead."""
        if self.on_payload is None:
            return payload
        replaced = self.on_payload(payload, model)
        if inspect.isawaitable(replaced):
            replaced = await replaced
        return payload if replaced is None else replaced

    def key(self) -> str | None:
        """The API key in clear, for the transport only."""
        return self.api_key.get_secret_value() if self.api_key is not None else None


def _snake(name: str) -> str:
    return "".join("_" + c.lower() if c.isupper() else c for c in name)


describe_fields(StreamOptions)
