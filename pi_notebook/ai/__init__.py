"""Layer 1: what an LLM API understands. Knows nothing of agents or Jupyter."""

from ._base import Number, PiModel, now_ms
from .abort import AbortController, AbortSignal
from .keys import MissingApiKeyError
from .models import (
    UnknownModelError,
    calculate_cost,
    default_model,
    default_model_choice,
    get_model,
    list_models,
    model_note,
)
from .options import StreamOptions
from .overflow import is_context_overflow
from .request import build_request, register_request_builder
from .retry import RetrySettings, is_retryable
from .stream import AssistantMessageStream, UnknownApiError, complete, register_provider, stream
from .types import (
    AssistantMessage,
    CacheRetention,
    Context,
    Cost,
    ImageContent,
    Message,
    Model,
    ModelCost,
    StopReason,
    TextContent,
    ThinkingContent,
    ThinkingLevel,
    Tool,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)

__all__ = [
    "AbortController",
    "AbortSignal",
    "AssistantMessage",
    "AssistantMessageStream",
    "CacheRetention",
    "Context",
    "Cost",
    "ImageContent",
    "Message",
    "MissingApiKeyError",
    "Model",
    "ModelCost",
    "Number",
    "PiModel",
    "RetrySettings",
    "StopReason",
    "StreamOptions",
    "TextContent",
    "ThinkingContent",
    "ThinkingLevel",
    "Tool",
    "ToolCall",
    "ToolResultMessage",
    "UnknownApiError",
    "UnknownModelError",
    "Usage",
    "UserMessage",
    "build_request",
    "calculate_cost",
    "complete",
    "default_model",
    "default_model_choice",
    "get_model",
    "is_context_overflow",
    "is_retryable",
    "list_models",
    "model_note",
    "now_ms",
    "register_provider",
    "register_request_builder",
    "stream",
]
