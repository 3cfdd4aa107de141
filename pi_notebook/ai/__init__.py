"""Layer 1: what an LLM API understands. Knows nothing of agents or Jupyter."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .lazy import lazy_exports

if TYPE_CHECKING:
    from ._base import Number, PiModel, describe_pending, now_ms
    from .abort import AbortController, AbortSignal
    from .api_registry import (
        ApiProvider,
        UnknownApiError,
        get_api_provider,
        list_api_providers,
        register_api_provider,
        register_provider,
        register_request_builder,
    )
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
    from .request import build_request
    from .retry import RetrySettings, is_retryable
    from .streaming import AssistantMessageStream, complete, stream
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

# Each name is imported from its module on first use: %load_ext needs only a few of them (#12, P2).
__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "._base": ["Number", "PiModel", "describe_pending", "now_ms"],
        ".abort": ["AbortController", "AbortSignal"],
        ".api_registry": [
            "ApiProvider",
            "UnknownApiError",
            "get_api_provider",
            "list_api_providers",
            "register_api_provider",
            "register_provider",
            "register_request_builder",
        ],
        ".keys": ["MissingApiKeyError"],
        ".models": [
            "UnknownModelError",
            "calculate_cost",
            "default_model",
            "default_model_choice",
            "get_model",
            "list_models",
            "model_note",
        ],
        ".options": ["StreamOptions"],
        ".overflow": ["is_context_overflow"],
        ".request": ["build_request"],
        ".retry": ["RetrySettings", "is_retryable"],
        ".streaming": ["AssistantMessageStream", "complete", "stream"],
        ".types": [
            "AssistantMessage",
            "CacheRetention",
            "Context",
            "Cost",
            "ImageContent",
            "Message",
            "Model",
            "ModelCost",
            "StopReason",
            "TextContent",
            "ThinkingContent",
            "ThinkingLevel",
            "Tool",
            "ToolCall",
            "ToolResultMessage",
            "Usage",
            "UserMessage",
        ],
    },
)


__all__ = [
    "AbortController",
    "AbortSignal",
    "ApiProvider",
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
    "describe_pending",
    "get_api_provider",
    "get_model",
    "is_context_overflow",
    "is_retryable",
    "list_api_providers",
    "list_models",
    "model_note",
    "now_ms",
    "register_api_provider",
    "register_provider",
    "register_request_builder",
    "stream",
]
