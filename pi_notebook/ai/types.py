"""Layer 1 types: what an LLM API understands.

Only three roles exist here (``user``, ``assistant``, ``toolResult``); everything an agent or an app adds on
top lives in :mod:`pi_notebook.agent_core`. Field names mirror Pi's ``packages/ai/src/types.ts``; the JSON form
is Pi's camelCase (see :class:`~pi_notebook.ai._base.PiModel`).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from ._base import Number, PiModel, now_ms

StopReason = Literal["stop", "length", "toolUse", "error", "aborted"]
"""Why an assistant message ended. ``error`` and ``aborted`` carry an ``error_message``."""

ThinkingLevel = Literal["minimal", "low", "medium", "high", "xhigh"]
"""pi-ai reasoning effort; the agent layer adds ``"off"``."""

CacheRetention = Literal["none", "short", "long"]
"""Prompt-cache retention asked of the provider (default ``short``)."""


# --- content blocks ------------------------------------------------------------------------------------


class TextContent(PiModel):
    """A block of text."""

    type: Literal["text"] = "text"
    """Block tag, always ``"text"``."""
    text: str
    """The text."""
    text_signature: str | None = None
    """Provider-opaque metadata (OpenAI Responses message id or JSON ``{"v":1,"id":...,"phase":...}``)."""


class ThinkingContent(PiModel):
    """The model's reasoning, streamed before or between answers."""

    type: Literal["thinking"] = "thinking"
    """Block tag, always ``"thinking"``."""
    thinking: str
    """Reasoning text (``"[Reasoning redacted]"`` for a redacted block)."""
    thinking_signature: str | None = None
    """Provider-opaque: Anthropic signature, OpenAI reasoning item JSON, the delta field name for
    openai-completions, or the encrypted payload of a redacted block."""
    redacted: bool | None = None
    """True when a safety filter redacted the reasoning; the payload is in ``thinking_signature``."""


class ImageContent(PiModel):
    """An inline image."""

    type: Literal["image"] = "image"
    """Block tag, always ``"image"``."""
    data: str
    """Base64 data, without a ``data:`` prefix."""
    mime_type: str
    """Media type, e.g. ``image/png``."""


class ToolCall(PiModel):
    """A call the assistant asks the agent to run."""

    type: Literal["toolCall"] = "toolCall"
    """Block tag, always ``"toolCall"``."""
    id: str
    """Tool call id, echoed by the matching tool result (OpenAI Responses: ``"{call_id}|{item_id}"``)."""
    name: str
    """Name of the tool to run."""
    arguments: dict[str, Any] = Field(default_factory=dict)
    """Parsed JSON arguments (an object even while streaming partial JSON)."""
    thought_signature: str | None = None
    """Provider-opaque: Google thought signature, or OpenRouter's encrypted reasoning detail."""


UserContent = Annotated[TextContent | ImageContent, Field(discriminator="type")]
AssistantContent = Annotated[TextContent | ThinkingContent | ToolCall, Field(discriminator="type")]


# --- usage ---------------------------------------------------------------------------------------------


class Cost(PiModel):
    """Cost of one message in USD, per token kind."""

    input: Number = 0
    """Cost of uncached input tokens."""
    output: Number = 0
    """Cost of output tokens."""
    cache_read: Number = 0
    """Cost of tokens read from the prompt cache."""
    cache_write: Number = 0
    """Cost of tokens written to the prompt cache."""
    total: Number = 0
    """Sum of the four."""


class Usage(PiModel):
    """Token counts reported by the provider for one assistant message."""

    input: Number = 0
    """Uncached input tokens."""
    output: Number = 0
    """Output tokens (reasoning included)."""
    cache_read: Number = 0
    """Input tokens read from the prompt cache."""
    cache_write: Number = 0
    """Input tokens written to the prompt cache."""
    total_tokens: Number = 0
    """All tokens of the request and response."""
    cost: Cost = Field(default_factory=Cost)
    """Cost in USD, computed from the model's prices."""


# --- messages ------------------------------------------------------------------------------------------


class UserMessage(PiModel):
    """What the user (or the app, on the user's behalf) says to the model."""

    role: Literal["user"] = "user"
    """Message tag, always ``"user"``."""
    content: str | list[UserContent]
    """A plain string or text/image blocks (Pi itself always builds the list form)."""
    timestamp: Number = Field(default_factory=now_ms)
    """Unix milliseconds."""


class AssistantMessage(PiModel):
    """One response of the model, with provenance, usage and why it stopped."""

    role: Literal["assistant"] = "assistant"
    """Message tag, always ``"assistant"``."""
    content: list[AssistantContent] = Field(default_factory=list)
    """Text, thinking and tool-call blocks in stream order."""
    api: str
    """The API that produced it, e.g. ``"anthropic-messages"``."""
    provider: str
    """The provider, e.g. ``"anthropic"``."""
    model: str
    """The model id."""
    usage: Usage = Field(default_factory=Usage)
    """Tokens and cost."""
    stop_reason: StopReason = "stop"
    """Why the response ended."""
    error_message: str | None = None
    """Set when ``stop_reason`` is ``"error"`` or ``"aborted"``."""
    timestamp: Number = Field(default_factory=now_ms)
    """Unix milliseconds."""


class ToolResultMessage(PiModel):
    """The result of one tool call, as the model will read it."""

    role: Literal["toolResult"] = "toolResult"
    """Message tag, always ``"toolResult"``."""
    tool_call_id: str
    """Id of the :class:`ToolCall` this answers."""
    tool_name: str
    """Name of the tool that ran."""
    content: list[UserContent] = Field(default_factory=list)
    """What the LLM sees: text and images."""
    details: Any = None
    """Structured data for the UI and logs; never sent to the LLM."""
    is_error: bool = False
    """True when the tool failed (the text then says why)."""
    timestamp: Number = Field(default_factory=now_ms)
    """Unix milliseconds."""


Message = Annotated[UserMessage | AssistantMessage | ToolResultMessage, Field(discriminator="role")]
"""The three roles an LLM API understands."""

MESSAGE_CLASSES: tuple[type[PiModel], ...] = (UserMessage, AssistantMessage, ToolResultMessage)


# --- tools, context, model -----------------------------------------------------------------------------


class Tool(PiModel):
    """A tool as the LLM sees it: a name, a description and a JSON Schema for its arguments."""

    name: str
    """Tool name the model calls."""
    description: str
    """What the tool does, for the model."""
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})
    """JSON Schema of the arguments object."""


class Context(PiModel):
    """Everything one LLM call receives."""

    system_prompt: str | None = None
    """The system prompt, if any."""
    messages: list[Message] = Field(default_factory=list)
    """The conversation, in LLM roles only."""
    tools: list[Tool] | None = None
    """Tools the model may call."""


class ModelCost(PiModel):
    """A model's prices in USD per million tokens."""

    input: Number = 0
    """Uncached input."""
    output: Number = 0
    """Output."""
    cache_read: Number = 0
    """Cache reads."""
    cache_write: Number = 0
    """Cache writes."""


class Model(PiModel):
    """An LLM as pi-ai describes it: where it lives, what it accepts, what it costs."""

    id: str
    """Model id sent to the API."""
    name: str
    """Human-readable name."""
    api: str
    """Wire protocol, e.g. ``"anthropic-messages"`` or ``"openai-completions"``; picks the provider code."""
    provider: str
    """Provider name, e.g. ``"anthropic"``, ``"openai"``, ``"ollama"``."""
    base_url: str = ""
    """API base URL."""
    reasoning: bool = False
    """Whether the model supports thinking / reasoning effort."""
    input: list[Literal["text", "image"]] = Field(default_factory=lambda: list[Literal["text", "image"]](["text"]))
    """Input modalities."""
    cost: ModelCost = Field(default_factory=ModelCost)
    """Prices per million tokens."""
    context_window: int = 128_000
    """Context window in tokens."""
    max_tokens: int = 16_384
    """Maximum output tokens."""
    headers: dict[str, str] | None = None
    """Extra HTTP headers sent with every request."""
    compat: dict[str, Any] | None = None
    """Provider-specific compatibility flags (e.g. openai-completions ``supportsDeveloperRole``)."""
